"""How to add an optional extra, said the way the README installs the project: from its checkout."""


def install_extra(extra: str) -> str:
    """The pip command that adds `extra` to the editable install made in the checkout."""
    return f'pip install -e ".[{extra}]" (in the deep-research checkout)'
