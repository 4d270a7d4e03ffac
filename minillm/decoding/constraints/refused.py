"""What the regex subset refuses, by name: escapes and group forms a DFA cannot express (a
backreference, lookaround) or that would mean something else here (\\b, inline flags).

Each key is what follows the backslash, or what follows "(?"; the value names it in the error.
"""

REFUSED_ESCAPES = {"b": "a word boundary \\b", "B": "a non-boundary \\B", "A": "an anchor \\A",
                   "Z": "an anchor \\Z", "z": "an anchor \\z", "G": "an anchor \\G",
                   "p": "a Unicode property \\p{..}", "P": "a Unicode property \\P{..}",
                   "k": "a named backreference \\k<..>", "g": "a backreference \\g<..>",
                   "N": "a named character \\N{..}", "X": "a grapheme \\X", "K": "\\K",
                   "0": "an octal escape \\0", "a": "a bell \\a (write \\x07)"}
REFUSED_GROUPS = {"=": "lookahead (?=", "!": "negative lookahead (?!", "<=": "lookbehind (?<=",
                  "<!": "negative lookbehind (?<!", "P<": "a named group (?P<", "<": "a named group (?<",
                  "P=": "a named backreference (?P=", "#": "a comment (?#", ">": "an atomic group (?>",
                  "|": "a branch reset (?|", "(": "a conditional (?(", "R": "recursion (?R)"}
