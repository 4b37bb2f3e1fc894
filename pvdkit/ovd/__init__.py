"""The ``.ovd`` byte layer: single-command codec and the fast whole-stream tokenizer."""

from pvdkit.ovd.codec import (
    HEADER_SIZE,
    AddToUniqueList,
    CreateObject,
    DecodedCommand,
    DestroyObject,
    RecordMessage,
    RegisterAttribute,
    RegisterClass,
    RegisterClassAttribute,
    RegisterEnumValue,
    RegisterFlagsAttribute,
    RegisterUniqueListAttribute,
    RemoveFromUniqueList,
    SetAttribute,
    StartFrame,
    StopFrame,
    decode_command_at,
    decode_header,
    decode_value,
    encode_command,
    encode_header,
    iter_decode,
)
from pvdkit.ovd.tokenizer import (
    COUNT_KEYS,
    NO_DATA_TYPE,
    CommandTable,
    decode_command,
    frame_timestamps,
    iter_commands,
    open_ovd,
    tokenize,
)

__all__ = [
    "COUNT_KEYS", "HEADER_SIZE", "NO_DATA_TYPE", "AddToUniqueList", "CommandTable", "CreateObject",
    "DecodedCommand", "DestroyObject", "RecordMessage", "RegisterAttribute", "RegisterClass",
    "RegisterClassAttribute", "RegisterEnumValue", "RegisterFlagsAttribute",
    "RegisterUniqueListAttribute", "RemoveFromUniqueList", "SetAttribute", "StartFrame", "StopFrame",
    "decode_command", "decode_command_at", "decode_header", "decode_value", "encode_command",
    "encode_header", "frame_timestamps", "iter_commands", "iter_decode", "open_ovd", "tokenize",
]
