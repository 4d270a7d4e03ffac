"""The cases of tests/tokenizer/formats/hf/test_spm.py as edits of the base tokenizer.json, shared with
the script that made their fixtures (scripts/make_spm_tokjson_fixtures.py)."""
import copy


def patched(base: dict, patch: dict) -> dict:
    """The base with a case's patch applied: top-level
    keys replaced, "model" keys merged; the words "normalized", "user", "duplicate",
    "drop <0x80>" and "add ▁Zürich" name the edits that need the base's contents."""
    data, patch = copy.deepcopy(base), copy.deepcopy(patch)
    model = patch.pop("model", {})
    if model.get("merges") == "duplicate":          # the 5th merge listed again at the end
        model["merges"] = data["model"]["merges"] + [data["model"]["merges"][4]]
    if model.get("vocab") == "drop <0x80>":
        model["vocab"] = {t: i for t, i in data["model"]["vocab"].items() if t != "<0x80>"}
    if model.get("vocab") == "add ▁Zürich":         # a token no merge makes
        model["vocab"] = {**data["model"]["vocab"], "▁Zürich": len(data["model"]["vocab"])}
    data["model"].update(model)
    if patch.get("added_tokens") == "normalized":
        patch["added_tokens"] = [{**t, "normalized": True} for t in data["added_tokens"]]
    if patch.get("added_tokens") == "user":         # a word of the vocabulary, split out
        patch["added_tokens"] = data["added_tokens"] + [
            {"id": len(data["model"]["vocab"]), "content": "hello", "single_word": False,
             "lstrip": False, "rstrip": False, "normalized": False, "special": False}]
    data.update(patch)
    return data
