"""The results of the commands and their text renderers, one module per command (group).

A command module (``icectl/cli/<command>.py``) holds only its options; it imports its view when it
runs, so that ``icectl --help`` creates none of these dataclasses. Each view module registers the
text renderer of each result type it defines (:func:`icectl.cli.output.text_renderer`); JSON needs
no code here: :func:`icectl.cli.output.render` serializes the dataclass.
"""
