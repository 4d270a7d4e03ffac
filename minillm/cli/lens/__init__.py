"""``minillm lens``: look inside a model from the terminal (the logit lens, the top heads), built
on minillm/lens/ (registered in minillm/cli/__init__.py's COMMANDS)."""
