"""The rotation-aware variety measure: skeletons mask entities and voice, nearest neighbours are same-level
prompts of other stories, and the clause inventory counts how often a phrasing recurs."""

from __future__ import annotations

from authoring.variety import ENTITY, VOICE, Masks, clauses, masks_for, rotation

MASKS = Masks(
    frozenset({"Working Orders", "Desk Board", "Listed Derivatives", "St. Brennan Endowment", "Orders"}),
    frozenset({"Fast one.", "St. Brennan", "listed"}),
)


def test_a_skeleton_masks_entities_voice_numbers_and_quoted_titles():
    skeleton = MASKS.skeleton(
        'Fast one. Put Working Orders on Desk Board, desk Listed Derivatives, 12 bps, tab "X".'
    )
    assert skeleton == f"{VOICE} put {ENTITY} on {ENTITY}, desk {ENTITY} bps, tab {ENTITY}."  # a list is one
    assert MASKS.skeleton("for St. Brennan Endowment") == f"for {ENTITY}"
    assert MASKS.skeleton("the listed desk") == f"the {VOICE} desk"


def test_rotated_phrasings_are_one_skeleton_however_the_entities_differ():
    same = [
        ("a", "level0", "Put Working Orders on Desk Board now, and keep the rest as it is."),
        ("b", "level0", "Put Orders on Desk Board now, and keep the rest as it is."),
        ("c", "level1", "Something else entirely, phrased its own way."),
    ]
    report = rotation(same, MASKS)
    assert report.nearest["level0"] == 1.0 and report.nearest["level1"] == 0.0
    assert report.nn_max == 1.0 and report.clause_max_reuse == 2 and not report.ok
    varied = [
        ("a", "level0", "Put Working Orders on Desk Board before the open."),
        ("b", "level0", "Desk Board needs Orders; leave everything else where it sits."),
    ]
    assert rotation(varied, MASKS).nn_similarity < 0.15


def test_clauses_are_cut_at_punctuation_and_short_pieces_dropped():
    assert clauses("keep the rest as it is; go. do not touch the twin — it is right") == [
        "keep the rest as it is",
        "do not touch the twin",
        "it is right",
    ]


def test_masks_come_from_the_world_the_tasks_and_the_voices(mini_world):
    from authoring.sources import Voice
    from certify.task import parse_task

    task = parse_task(
        {
            "id": "t_level0",
            "difficulty": "level0",
            "prompt": "p",
            "setup": {"default_selected_dashboard": "Night Desk"},
            "eval": {},
        },
        "t.json",
    )
    masks = masks_for(mini_world, [task], [Voice(openers=["Quick one."], aliases={"Beta": "the beta book"})])
    assert {"Positions", "Acme Data", "Desk App", "QTD", "Close Checklist", "Night Desk"} <= masks.entities
    assert {"Quick one.", "the beta book"} <= masks.voice
