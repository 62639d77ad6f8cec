"""Agent Skills: folders with a `SKILL.md` the model loads when a task calls for them.

`found` discovers and checks them (project folders before the user's), `loading` turns
one into the text the model reads and into the slash command `/<name>` a user starts it
with. The `Skill` tool (tools/skill.py) and the turn's gate (permissions/scoped.py) use
them; the session wires them in.
"""
