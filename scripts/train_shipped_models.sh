#!/bin/sh
# Reproduce the two shipped models (weights/shakespeare, weights/songci) from the corpora in the
# development data folder (../shared/data/corpora; see weights/*/README.md for provenance).
# Each command runs in < 45 minutes on a 2-core machine; they can run at the same time, one
# BLAS thread each. Then: python scripts/plot_loss.py weights/shakespeare weights/songci
set -e
CORPORA=${CORPORA:-../shared/data/corpora}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

python -m minillm train --data "$CORPORA/shakespeare_complete.txt" --out weights/shakespeare \
    --vocab-size 2048 --layers 4 --d-model 128 --heads 4 --context 128 \
    --steps 3000 --batch 16 --seed 0 --overwrite &

# each Chinese character is its own pre-token (stage 1), the rest is split as GPT-2 does (stage 2)
python -m minillm train --data "$CORPORA/zh_songci.txt" --out weights/songci \
    --vocab-size 4096 --pattern '\p{Han}' --pattern gpt2 --layers 4 --d-model 128 --heads 4 \
    --context 128 --steps 2000 --batch 16 --seed 0 --overwrite &

wait
