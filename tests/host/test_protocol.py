"""The command format is defined once (transport/protocol.py): the encoder and the decoder agree,
and js/bridge.mjs decodes every opcode with the same number."""

import re
from importlib.resources import files

import pytest

from tenferro_web.transport.protocol import (
    MAX_BIND_GROUPS,
    OPCODES,
    Clear,
    CommandEncoder,
    Copy,
    Dispatch,
    decode,
)

BRIDGE = (files("tenferro_web") / "js" / "bridge.mjs").read_text(encoding="utf-8")


def test_bridge_defines_and_decodes_every_opcode_of_the_protocol():
    defined = {name: int(value) for name, value in
               re.findall(r"^const (OP_[A-Z]+) = (\d+);", BRIDGE, re.MULTILINE)}
    assert defined == OPCODES
    for name in OPCODES:
        assert re.search(rf"op === {name}\b", BRIDGE), f"bridge.mjs never handles {name}"
    assert re.search(rf"^const MAX_BIND_GROUPS = {MAX_BIND_GROUPS};$", BRIDGE, re.MULTILINE)


def test_decode_inverts_the_encoder():
    encoder = CommandEncoder(params_align_words=64)
    encoder.dispatch(3, [7, 8, 9], (5, 2, 1), [11, 12])
    encoder.copy(11, 16, 13, 0, 64)
    encoder.dispatch(4, [1], (1, 1, 1), [13])
    encoder.clear(12, 0, 32)
    assert list(decode(encoder.words)) == [
        Dispatch(3, 0, 3, (5, 2, 1), (11, 12)), Copy(11, 16, 13, 0, 64),
        Dispatch(4, 64, 1, (1, 1, 1), (13,)), Clear(12, 0, 32)]
    assert list(encoder.params[64:65]) == [1] and encoder.dispatches == 2
    with pytest.raises(ValueError, match="unknown command word 9"):
        list(decode([9]))


def test_a_launch_repeating_the_last_parameter_block_binds_it_where_it_is():
    """An op chain launches one program again and again: its parameter tuple is written once;
    any other block (another tuple, equal words in a list, a block after another) is written
    at its own aligned offset."""
    encoder = CommandEncoder(params_align_words=64)
    chain = (4, 5, 6)
    for buffers in ([1, 2], [2, 3], [3, 1]):
        encoder.dispatch(7, chain, (1, 1, 1), buffers)
    assert len(encoder.params) == 3
    encoder.dispatch(7, [4, 5, 6], (1, 1, 1), [1, 2])  # a list may change: written anew
    encoder.dispatch(8, (9,), (2, 1, 1), [1])
    encoder.dispatch(7, chain, (1, 1, 1), [1, 2])  # not the last block: written again
    offsets = [d.params_offset for d in decode(encoder.words)]
    assert offsets == [0, 0, 0, 64, 128, 192]
    assert list(encoder.params[192:195]) == [4, 5, 6] and encoder.dispatches == 6
    assert encoder.workgroups == 7
    encoder.reset()
    encoder.dispatch(7, chain, (1, 1, 1), [1, 2])  # a new stream has its own params
    assert list(encoder.params) == [4, 5, 6]
