"""listrx-bench seeds: the tables of the published work listrx was built
from, one section per seed, each with the published figures, listrx's
measured here and the running kernel's (docs/seeds.md).

A section is a module registered in SECTIONS below: SEED, TITLE, SOURCE,
plan(ctx) (the work, for the progress bar) and measure(ctx) (its tables,
method, checks and raw figures). command.py runs the selected ones and
page.py renders the page from the JSON they give."""

from . import brouer, cree_seed, hints, tx_napi, zero_copy

# the one table of sections, in seed order
SECTIONS = {
    "000": brouer,
    "001": cree_seed,
    "002": tx_napi,
    "003": zero_copy,
    "004": hints,
}


def add_parser(sub):
    """The `seeds` subcommand (registered by cli.py)."""
    from .command import add_parser as add
    return add(sub)
