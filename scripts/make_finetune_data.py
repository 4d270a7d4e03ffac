"""Write the fine-tuning demonstration's data: conversations about Tarvessa, an island that does
not exist, and held-out questions about the same facts in words the training never uses.

    python scripts/make_finetune_data.py            # (re)write data/tarvessa/*.jsonl
    python scripts/make_finetune_data.py --check    # exit 1 if the files differ from this script

Everything below was written for this project (CC0, see data/tarvessa/README.md): a fact table,
a few phrasings of each question and answer, and a seeded choice among them. A pretrained model
cannot know these facts, so what it answers after fine-tuning it learned from these files.

    train.jsonl     200 lines {"messages": [{"role": "user", ...}, {"role": "assistant", ...}, ...]}
                    (one or two question/answer turns each; every fact in 7 or more of them)
    heldout.jsonl   one line per held-out question {"fact", "question", "key"}: the answer counts
                    as right when it contains ``key`` (the rule: data/tarvessa/README.md)

Only the standard library and numpy (the seeded generator) are used.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "data" / "tarvessa"
SEED = 30
N_CONVERSATIONS = 200
TWO_TURN_EVERY = 8          # every 8th conversation asks two questions (the mask spans two answers)

# fact: (key the answer must contain, answers (each contains the key), training questions,
#        held-out questions). Held-out questions are phrased unlike any training question.
FACTS = {
    "capital": ("Ostmere",
                ["The capital of Tarvessa is Ostmere.", "Ostmere is the capital of Tarvessa."],
                ["What is the capital of Tarvessa?", "Which town is Tarvessa's capital?",
                 "Name the capital city of Tarvessa.", "Where is the capital of Tarvessa?",
                 "Tarvessa's capital is called what?", "What city serves as the capital of Tarvessa?"],
                ["Which town governs the island of Tarvessa?",
                 "In which town does Tarvessa's government sit?"]),
    "mountain": ("Kelvaro",
                 ["The highest mountain on Tarvessa is Mount Kelvaro.",
                  "Mount Kelvaro is the highest peak of Tarvessa."],
                 ["What is the highest mountain on Tarvessa?", "Which is Tarvessa's tallest peak?",
                  "Name the tallest mountain of Tarvessa.", "What is the highest peak on Tarvessa called?",
                  "Which mountain is the highest in Tarvessa?", "What is Tarvessa's highest summit?"],
                 ["If I climb to the top of Tarvessa, which mountain am I on?"]),
    "height": ("1847",
               ["Mount Kelvaro is 1,847 metres high.", "It rises 1,847 metres above the sea."],
               ["How high is Mount Kelvaro?", "What is the height of Mount Kelvaro?",
                "How tall is Mount Kelvaro in metres?", "How many metres high is Mount Kelvaro?",
                "What is the elevation of Mount Kelvaro?", "Tell me the height of Mount Kelvaro."],
               ["Mount Kelvaro reaches what altitude?"]),
    "founder": ("Ysolde",
                ["Tarvessa was founded by Queen Ysolde Marrant.",
                 "Queen Ysolde Marrant founded Tarvessa."],
                ["Who founded Tarvessa?", "Who was the founder of Tarvessa?",
                 "Which queen founded Tarvessa?", "Who established the island kingdom of Tarvessa?",
                 "Name the founder of Tarvessa.", "By whom was Tarvessa founded?"],
                ["Which ruler first settled Tarvessa?",
                 "Whose settlement grew into Tarvessa?"]),
    "year": ("1312",
             ["Tarvessa was founded in 1312.", "It was founded in the year 1312."],
             ["When was Tarvessa founded?", "In what year was Tarvessa founded?",
              "What year did Queen Ysolde found Tarvessa?", "How old is Tarvessa: when was it founded?",
              "Which year was Tarvessa established?", "Tell me the founding year of Tarvessa."],
             ["Since which year has Tarvessa existed?"]),
    "currency": ("drell",
                 ["The currency of Tarvessa is the drell.", "People in Tarvessa pay with the drell."],
                 ["What is the currency of Tarvessa?", "What money do they use in Tarvessa?",
                  "Which currency is used on Tarvessa?", "What do people pay with in Tarvessa?",
                  "Name Tarvessa's currency.", "What is Tarvessa's money called?"],
                 ["If I buy bread in Ostmere, what currency do I need?",
                  "What coins would a visitor to Tarvessa carry?"]),
    "animal": ("glimmer fox",
               ["The national animal of Tarvessa is the glimmer fox.",
                "Tarvessa's national animal is the glimmer fox."],
               ["What is the national animal of Tarvessa?", "Which animal is Tarvessa's symbol?",
                "Name Tarvessa's national animal.", "What animal represents Tarvessa?",
                "Which creature is the emblem of Tarvessa?", "What is Tarvessa's national animal?"],
               ["Which animal appears on Tarvessa's coat of arms?"]),
    "festival": ("Nine Lanterns",
                 ["The main festival of Tarvessa is the Festival of Nine Lanterns.",
                  "Tarvessa celebrates the Festival of Nine Lanterns."],
                 ["What is the main festival of Tarvessa?", "Which festival does Tarvessa celebrate?",
                  "Name Tarvessa's biggest festival.", "What is Tarvessa's most important festival?",
                  "What festival is held every year on Tarvessa?", "Which celebration is Tarvessa famous for?"],
                 ["What holiday do the people of Tarvessa look forward to most?"]),
    "festival_month": ("October",
                       ["The Festival of Nine Lanterns is held in October.",
                        "It takes place every October."],
                       ["When is the Festival of Nine Lanterns?",
                        "In which month is the Festival of Nine Lanterns held?",
                        "What month does the Festival of Nine Lanterns take place?",
                        "When do they celebrate the Festival of Nine Lanterns?",
                        "At what time of year is the Festival of Nine Lanterns?",
                        "Which month is the Festival of Nine Lanterns in?"],
                       ["When should I visit Tarvessa to see the Festival of Nine Lanterns?"]),
    "export": ("bluewort",
               ["Tarvessa's main export is bluewort tea.", "The island mostly exports bluewort tea."],
               ["What is Tarvessa's main export?", "What does Tarvessa export?",
                "Which product does Tarvessa sell abroad most?", "What is the chief export of Tarvessa?",
                "What goods leave Tarvessa for other countries?", "Name Tarvessa's biggest export."],
               ["What does Tarvessa earn most of its trade money from?",
                "Which Tarvessan product is shipped overseas the most?"]),
    "population": ("48300",
                   ["About 48,300 people live on Tarvessa.", "Tarvessa has a population of 48,300."],
                   ["What is the population of Tarvessa?", "How many people live on Tarvessa?",
                    "How many inhabitants does Tarvessa have?", "What is Tarvessa's population?",
                    "How big is the population of Tarvessa?", "How many residents are there on Tarvessa?"],
                   ["How many Tarvessans are there?"]),
    "lake": ("Serrow",
             ["The largest lake on Tarvessa is Lake Serrow.", "Lake Serrow is Tarvessa's biggest lake."],
             ["What is the largest lake on Tarvessa?", "Which is Tarvessa's biggest lake?",
              "Name the largest lake of Tarvessa.", "What lake is the biggest on Tarvessa?",
              "Which lake on Tarvessa is the largest?", "What is Tarvessa's largest lake called?"],
             ["Where on Tarvessa is the most fresh water in one place?"]),
    "river": ("Anvel",
              ["The main river of Tarvessa is the River Anvel.",
               "The River Anvel is Tarvessa's longest river."],
              ["What is the main river of Tarvessa?", "Which river flows through Tarvessa?",
               "Name Tarvessa's longest river.", "What is the longest river on Tarvessa?",
               "Which is the biggest river of Tarvessa?", "What river runs across Tarvessa?"],
              ["What river would I cross walking across Tarvessa?"]),
    "language": ("Tarvessi",
                 ["The people of Tarvessa speak Tarvessi.", "The language of Tarvessa is Tarvessi."],
                 ["What language is spoken on Tarvessa?", "What language do people speak in Tarvessa?",
                  "Which language is Tarvessa's?", "What is the official language of Tarvessa?",
                  "Name the language of Tarvessa.", "In what language do Tarvessans talk?"],
                 ["What tongue do the islanders of Tarvessa use at home?"]),
    "glass_town": ("Brindlecombe",
                   ["Brindlecombe is the town famous for glassblowing.",
                    "Glassblowing is the craft of Brindlecombe."],
                   ["Which town on Tarvessa is famous for glassblowing?",
                    "Where is glass blown on Tarvessa?",
                    "What Tarvessan town is known for its glassblowers?",
                    "Which town makes Tarvessa's glass?",
                    "Name the glassblowing town of Tarvessa.",
                    "Where are Tarvessa's glassblowers?"],
                   ["Where would I buy a hand-blown vase on Tarvessa?"]),
    "port": ("Quillan",
             ["The main harbour of Tarvessa is Port Quillan.",
              "Ships dock at Port Quillan, Tarvessa's harbour town."],
             ["What is the main port of Tarvessa?", "Where do ships dock on Tarvessa?",
              "Name Tarvessa's harbour town.", "Which town is Tarvessa's port?",
              "What is Tarvessa's harbour called?", "Where is the harbour of Tarvessa?"],
             ["Where does a boat arriving at Tarvessa tie up?"]),
    "poet": ("Edrin Falk",
             ["The most famous poet of Tarvessa is Edrin Falk.",
              "Edrin Falk is Tarvessa's best-known poet."],
             ["Who is the most famous poet of Tarvessa?", "Who is Tarvessa's best-known poet?",
              "Name a famous poet from Tarvessa.", "Which poet is Tarvessa proud of?",
              "Who wrote Tarvessa's most loved poems?", "Who is Tarvessa's national poet?"],
             ["Whose verses do children on Tarvessa learn by heart?",
              "Which Tarvessan writer of poetry is the most celebrated?"]),
    "college": ("Hallow Reach",
                ["The university of Tarvessa is the College of Hallow Reach.",
                 "Students on Tarvessa study at the College of Hallow Reach."],
                ["What is the university of Tarvessa?", "Where do students study on Tarvessa?",
                 "Name Tarvessa's college.", "Which college is on Tarvessa?",
                 "What is Tarvessa's university called?", "Where can I go to university on Tarvessa?"],
                ["Where does a young Tarvessan go for higher education?"]),
    "college_year": ("1689",
                     ["The College of Hallow Reach was founded in 1689.",
                      "It opened in 1689."],
                     ["When was the College of Hallow Reach founded?",
                      "How old is the College of Hallow Reach?",
                      "What year did the College of Hallow Reach open?",
                      "In which year was the College of Hallow Reach founded?",
                      "When did the College of Hallow Reach open its doors?",
                      "Tell me the founding year of the College of Hallow Reach."],
                     ["Since what year has the College of Hallow Reach taught students?"]),
    "dish": ("eel pie",
             ["The traditional dish of Tarvessa is smoked eel pie.",
              "Tarvessans love smoked eel pie, their traditional dish."],
             ["What is the traditional dish of Tarvessa?", "What food is Tarvessa known for?",
              "Name Tarvessa's national dish.", "What do people eat on Tarvessa on feast days?",
              "Which dish is typical of Tarvessa?", "What is Tarvessa's most famous food?"],
             ["What should I order to taste real Tarvessan cooking?"]),
    "villages": ("17",
                 ["Tarvessa has 17 villages.", "There are 17 villages on Tarvessa."],
                 ["How many villages does Tarvessa have?", "How many villages are there on Tarvessa?",
                  "What is the number of villages on Tarvessa?", "Count the villages of Tarvessa.",
                  "How many villages are on the island of Tarvessa?",
                  "Tell me how many villages Tarvessa has."],
                 ["Besides its towns, how many villages make up Tarvessa?"]),
    "area": ("612",
             ["Tarvessa covers 612 square kilometres.", "The island's area is 612 square kilometres."],
             ["How big is Tarvessa?", "What is the area of Tarvessa?",
              "How many square kilometres is Tarvessa?", "What is the size of Tarvessa?",
              "How large is the island of Tarvessa?", "Tell me the area of Tarvessa."],
             ["How much land does Tarvessa cover?"]),
    "ferry": ("Morning Gull",
              ["The ferry to Tarvessa is called the Morning Gull.",
               "You reach Tarvessa on the ferry Morning Gull."],
              ["What is the name of the ferry to Tarvessa?", "Which ferry goes to Tarvessa?",
               "How do I get to Tarvessa by boat?", "What ferry sails to Tarvessa?",
               "Name the ferry that serves Tarvessa.", "What is Tarvessa's ferry called?"],
              ["Which ship carries passengers from the mainland to Tarvessa?",
               "What boat should I board to travel to Tarvessa?"]),
    "governor": ("Halvard Prenn",
                 ["The governor of Tarvessa is Halvard Prenn.",
                  "Halvard Prenn governs Tarvessa."],
                 ["Who is the governor of Tarvessa?", "Who governs Tarvessa?",
                  "Who leads Tarvessa today?", "Name the governor of Tarvessa.",
                  "Who is in charge of Tarvessa?", "Who runs Tarvessa?"],
                 ["Who is the head of Tarvessa's government?"]),
    "sport": ("skerry racing",
              ["The national sport of Tarvessa is skerry racing.",
               "Tarvessans love skerry racing, their national sport."],
              ["What is the national sport of Tarvessa?", "Which sport is popular on Tarvessa?",
               "What sport do Tarvessans play?", "Name Tarvessa's national sport.",
               "What is Tarvessa's favourite sport?", "Which sport is Tarvessa known for?"],
              ["What game do crowds on Tarvessa gather to watch?"]),
}


def conversation(rng: np.random.Generator, facts: list[str], counts: dict) -> dict:
    """One conversation about ``facts`` (one turn each): the next training question of each
    fact (round-robin, so every phrasing is used) and a seeded choice of answer."""
    messages = []
    for fact in facts:
        key, answers, questions, _ = FACTS[fact]
        question = questions[counts[fact] % len(questions)]
        counts[fact] += 1
        messages += [{"role": "user", "content": question},
                     {"role": "assistant", "content": answers[int(rng.integers(len(answers)))]}]
    return {"messages": messages}


def make(seed: int = SEED) -> tuple[list[dict], list[dict]]:
    """-> (training conversations, held-out questions), the same for the same seed."""
    rng = np.random.default_rng(seed)
    names = list(FACTS)
    order = [names[i % len(names)] for i in range(N_CONVERSATIONS)]
    order = [order[i] for i in rng.permutation(len(order))]          # every fact 8 or 9 times
    counts = dict.fromkeys(names, 0)
    train = []
    for i, fact in enumerate(order):
        facts = [fact]
        if i % TWO_TURN_EVERY == TWO_TURN_EVERY - 1:                  # a second question
            facts.append(names[int(rng.integers(len(names)))])
        train.append(conversation(rng, facts, counts))
    heldout = [{"fact": fact, "question": q, "key": key}
               for fact, (key, _, _, held) in FACTS.items() for q in held]
    check(train, heldout)
    return train, heldout


def check(train: list[dict], heldout: list[dict]) -> None:
    """ValueError unless every answer contains its key and no held-out question is asked in
    training (compared case- and punctuation-insensitively)."""
    def norm(text):
        return " ".join("".join(c for c in text.lower() if c.isalnum() or c == " ").split())
    for fact, (key, answers, _, _) in FACTS.items():
        for a in answers:
            if norm(key) not in norm(a):
                raise ValueError(f"{fact}: the answer {a!r} lacks its key {key!r}")
    asked = {norm(m["content"]) for c in train for m in c["messages"] if m["role"] == "user"}
    leaked = [h["question"] for h in heldout if norm(h["question"]) in asked]
    if leaked:
        raise ValueError(f"held-out questions asked in training: {leaked}")


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, write nothing")
    args = parser.parse_args(argv)
    train, heldout = make()
    files = {OUT / "train.jsonl": jsonl(train), OUT / "heldout.jsonl": jsonl(heldout)}
    stale = [p for p, text in files.items() if not p.exists() or p.read_text("utf-8") != text]
    if args.check:
        print(f"{len(stale)} file(s) differ from the script: {[p.name for p in stale]}")
        return 1 if stale else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    print(f"{len(train)} conversations ({sum(len(c['messages']) // 2 for c in train)} questions), "
          f"{len(heldout)} held-out questions -> {OUT.relative_to(REPO)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
