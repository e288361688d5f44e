"""Words that fill the depth world's pages the way real pages are filled: paragraphs about how
samples were handled, who did the work and when, with the years, counts and rooms real pages
mention, and no measured property (those are planted on purpose, in `facts`)."""

from __future__ import annotations

PARAGRAPHS = (
    "Samples of the {name} were cut from three production lots and stored in sealed bags "
    "until the day of testing, so that humidity in the store room could not change them.",
    "The work was shared between two teams: one prepared and polished the specimens, the "
    "other ran the rigs and kept the logbooks, which are archived with the raw files.",
    "Since 1998 the laboratory has kept every rig under the same calibration routine; the "
    "{noun} specimens were checked against reference blocks before and after each series.",
    "Each specimen carried an engraved number and a colour mark, and 48 samples in all went "
    "through the full programme without being handled by the same technician twice.",
    "Readers who compare these results with older reports should note that the preparation "
    "of the {noun} changed in 2011, when the supplier moved its finishing line.",
    "The rigs stand in a basement room with a steady temperature; doors were kept closed "
    "during the runs, and nobody entered the room while a specimen was under load.",
    "Where a specimen failed at a grip rather than in its gauge length, the run was "
    "discarded and a fresh specimen from the same lot was tested in its place.",
    "The {name} is supplied as plates and bars; the survey used bars only, because the "
    "plates of the first lot showed surface marks that would have spoiled the comparison.",
    "Fourteen technicians took part over the year, each trained on the written procedure "
    "before touching the rigs, and each signed the logbook after every series.",
    "Observations that could not be explained at the time are listed in the logbooks with a "
    "question mark; none of them changed the conclusions drawn in this survey.",
    "The survey follows the structure agreed at the 2019 meeting of the partner "
    "laboratories: preparation first, then the tests, then a short discussion.",
    "Some of the {noun} bars were set aside as retained samples, so that any figure in "
    "doubt can be measured again on material from the very same lot.",
    "Photographs of fracture surfaces were taken under the microscope in room 3 and are "
    "kept with the logbooks; they are not reproduced here for lack of space.",
    "Comments from the supplier were invited before publication; they concerned wording "
    "only and did not touch any of the results reported on this page.",
    "The {name} was handled with gloves throughout, since grease from fingers is known to "
    "change how a specimen behaves at its surface in several of the tests.",
    "Chapter 4 of the laboratory manual describes how a series is planned, how many "
    "specimens it needs, and when a series must be repeated from the start.",
)


def paragraphs(start: int, count: int, name: str, noun: str) -> list[str]:
    """`count` paragraphs, starting at `start` (wrapping round), for the material `name`."""
    return [
        PARAGRAPHS[(start + n) % len(PARAGRAPHS)].format(name=name, noun=noun) for n in range(count)
    ]
