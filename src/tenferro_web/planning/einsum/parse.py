"""einsum subscripts in numpy's syntax: explicit and implicit output, ``...``, upper- and
lower-case labels, spaces. Errors name the position (``SubscriptError``); ellipsis axes become
labels ``…0, …1`` aligned from the right, as numpy aligns them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ...errors import InvalidArgument, ShapeMismatch, SubscriptError

OP = "einsum"
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class Subscripts:
    """Per-operand label lists and the output labels; ellipsis axes get labels ``…0, …1``."""

    inputs: tuple[tuple[str, ...], ...]
    output: tuple[str, ...]
    sizes: dict[str, int] = field(compare=False)


def _terms(text: str, start: int) -> list[tuple[list[str], int]]:
    """Split one side into terms of labels; '...' becomes the token '...'. Returns (tokens,
    start position) per term."""
    terms: list[tuple[list[str], int]] = [([], start)]
    i = 0
    while i < len(text):
        ch = text[i]
        pos = start + i
        if ch == ",":
            terms.append(([], pos + 1))
        elif ch == ".":
            if text[i:i + 3] != "...":
                raise SubscriptError(OP, "", pos, "'.' must be part of an ellipsis '...'")
            if "..." in terms[-1][0]:
                raise SubscriptError(OP, "", pos, "more than one ellipsis in one operand")
            terms[-1][0].append("...")
            i += 3
            continue
        elif ch in _LETTERS:
            terms[-1][0].append(ch)
        elif not ch.isspace():
            raise SubscriptError(OP, "", pos, f"invalid subscript character {ch!r} (labels "
                                              "are a-z and A-Z)")
        i += 1
    return terms


def parse_subscripts(subscripts: str, shapes: Sequence[Sequence[int]]) -> Subscripts:
    if not isinstance(subscripts, str):
        raise InvalidArgument(OP, "subscripts", f"expected a str, got {type(subscripts).__name__}")
    try:
        return _parse(subscripts, [tuple(s) for s in shapes])
    except SubscriptError as e:
        if e.subscripts:
            raise
        raise SubscriptError(OP, subscripts, e.position, e.message.rsplit(" at position", 1)[0]
                             ) from None


def _parse(text: str, shapes: list[tuple[int, ...]]) -> Subscripts:
    if not shapes:
        raise SubscriptError(OP, "", 0, "einsum needs at least one operand")
    arrow = text.find("->")
    if arrow != -1 and text.find("->", arrow + 2) != -1:
        raise SubscriptError(OP, "", text.find("->", arrow + 2), "more than one '->'")
    lhs_text = text if arrow == -1 else text[:arrow]
    for bad in ("-", ">"):
        if bad in lhs_text:
            raise SubscriptError(OP, "", lhs_text.index(bad), f"stray {bad!r}; the output "
                                                              "arrow is '->'")
    terms = _terms(lhs_text, 0)
    if len(terms) != len(shapes):
        raise SubscriptError(OP, "", len(lhs_text), f"{len(terms)} operand subscript(s) for "
                                                    f"{len(shapes)} operand(s)")
    inputs: list[list[str]] = []
    ellipsis_shapes: list[tuple[int, ...]] = []
    for (tokens, pos), shape in zip(terms, shapes):
        named = [t for t in tokens if t != "..."]
        if "..." in tokens:
            extra = len(shape) - len(named)
            if extra < 0:
                raise SubscriptError(OP, "", pos, f"operand of rank {len(shape)} has more "
                                                  f"labels ({len(named)}) than axes")
            cut = tokens.index("...")
            ellipsis_shapes.append(shape[cut:cut + extra])
            labels = tokens[:cut] + [f"…{j}" for j in range(extra)] + tokens[cut + 1:]
        else:
            if len(named) != len(shape):
                raise SubscriptError(OP, "", pos, f"{len(named)} label(s) for an operand of "
                                                  f"rank {len(shape)}")
            labels = named
        inputs.append(labels)
    # Ellipsis axes align from the right (numpy); label '…j' counts from the left of the
    # longest ellipsis, so rename each operand's ellipsis labels to right-aligned ones.
    width = max((len(s) for s in ellipsis_shapes), default=0)
    for labels in inputs:
        k = sum(1 for lab in labels if lab.startswith("…"))
        for idx, lab in enumerate(labels):
            if lab.startswith("…"):
                labels[idx] = f"…{width - k + int(lab[1:])}"

    # numpy's rules: a label repeated within one operand has one extent there; across
    # operands extents agree or are 1 (broadcasting).
    extents: dict[str, list[int]] = {}
    for labels, shape in zip(inputs, shapes):
        mine: dict[str, int] = {}
        for lab, extent in zip(labels, shape):
            if mine.setdefault(lab, extent) != extent:
                raise ShapeMismatch(
                    OP, "ExpectedActual", f"label {show_label(lab)} repeats within one operand "
                    f"with extents {mine[lab]} and {extent}", label=lab, expected=mine[lab],
                    actual=extent)
        for lab, extent in mine.items():
            extents.setdefault(lab, []).append(extent)
    sizes: dict[str, int] = {}
    for lab, seen in extents.items():
        wide = sorted(set(seen) - {1})  # extent-1 axes broadcast against the others (numpy)
        if len(wide) > 1:
            raise ShapeMismatch(OP, "ExpectedActual", f"label {show_label(lab)} has extents "
                                f"{wide[0]} and {wide[1]}", label=lab, expected=wide[0],
                                actual=wide[1])
        sizes[lab] = wide[0] if wide else 1

    ellipsis = [f"…{j}" for j in range(width)]
    if arrow == -1:
        counts: dict[str, int] = {}
        for labels in inputs:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        output = [lab for lab in ellipsis if lab in counts] + \
            sorted(lab for lab, c in counts.items() if c == 1 and not lab.startswith("…"))
    else:
        out_text = text[arrow + 2:]
        out_terms = _terms(out_text, arrow + 2)
        if len(out_terms) != 1:
            raise SubscriptError(OP, "", out_terms[1][1] - 1, "the output has no ','")
        output = []
        tokens, pos = out_terms[0]
        next_at = 0  # where in out_text the next token starts, for carets under the right one
        for tok in tokens:
            at = out_text.index(tok, next_at)
            next_at = at + len(tok)
            if tok == "...":
                output.extend(ellipsis)
                continue
            if tok in output:
                raise SubscriptError(OP, "", arrow + 2 + at,
                                     f"output label {tok!r} appears more than once")
            if tok not in sizes:
                raise SubscriptError(OP, "", arrow + 2 + at,
                                     f"output label {tok!r} is not in any operand")
            output.append(tok)
        if width and "..." not in tokens:
            raise SubscriptError(OP, "", len(text), "the operands have ellipsis axes, so "
                                                    "the output needs '...'")
    return Subscripts(tuple(tuple(x) for x in inputs), tuple(output), sizes)


def show_label(label: str) -> str:
    return f"'...' axis {label[1:]}" if label.startswith("…") else repr(label)
