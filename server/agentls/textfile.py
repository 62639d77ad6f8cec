"""Text files in their own encoding: readable text for the model, every unchanged byte kept.

Tools edit text, files hold bytes. A decode that replaces what it cannot read (U+FFFD)
destroys a Latin-1 file on its first edit, so decoding here is lossless: UTF-8, UTF-8 with
a BOM and UTF-16 with a BOM decode as what they are; any other byte string without NULs
decodes as windows-1252 in the WHATWG sense (the five bytes cp1252 leaves undefined map to
the C1 controls), which gives every byte its own character. Encoding with the encoding a
file was read in therefore gives back the same bytes wherever the text is unchanged, BOM
and line endings included (nothing translates newlines). Decoded text never holds lone
surrogates, so it can always be sent as JSON to a client or a model.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path

_SNIFF_BYTES = 8192
# Control bytes that text does not hold (tab, line breaks, form feed and escape it does).
_CONTROL_BYTES = bytes([*range(0x01, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20)])
# More than this share of control bytes in the first 8 KB makes a file binary.
_MAX_CONTROL_SHARE = 0.10


def _windows_1252_table() -> str:
    def char(byte: int) -> str:
        try:
            return bytes([byte]).decode("cp1252")
        except UnicodeDecodeError:
            return chr(byte)

    return "".join(char(b) for b in range(256))


_WINDOWS_1252 = _windows_1252_table()
_WINDOWS_1252_ENCODE = codecs.charmap_build(_WINDOWS_1252)


@dataclass(frozen=True, slots=True)
class TextEncoding:
    """How a file's text is stored: a codec and the byte order mark in front of it."""

    name: str
    bom: bytes = b""

    @property
    def label(self) -> str:
        """A human name such as `UTF-16 LE with BOM` or `windows-1252`."""
        names = {"utf-8": "UTF-8", "utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE"}
        shown = names.get(self.name, self.name)
        return f"{shown} with BOM" if self.bom else shown


UTF8 = TextEncoding("utf-8")
WINDOWS_1252 = TextEncoding("windows-1252")
_BOMS = (
    TextEncoding("utf-8", codecs.BOM_UTF8),
    TextEncoding("utf-16-le", codecs.BOM_UTF16_LE),
    TextEncoding("utf-16-be", codecs.BOM_UTF16_BE),
)


class BinaryContent(ValueError):
    """The bytes are not text; the message says why (for a tool error)."""


class UnencodableText(ValueError):
    """The text holds a character the file's encoding has no bytes for."""

    def __init__(self, char: str, encoding: TextEncoding) -> None:
        super().__init__(
            f"the file is {encoding.label}, which has no bytes for {char!r} (U+{ord(char):04X})"
        )
        self.char = char
        self.encoding = encoding


@dataclass(frozen=True, slots=True)
class DecodedText:
    text: str
    encoding: TextEncoding


def decode_bytes(data: bytes) -> DecodedText:
    """The text in `data` and the encoding to write it back in; BinaryContent if not text."""
    for encoding in _BOMS:
        if data.startswith(encoding.bom):
            return _decode_with_bom(data, encoding)
    binary = binary_reason(data)
    if binary is not None:
        raise BinaryContent(binary)
    try:
        return DecodedText(data.decode("utf-8"), UTF8)
    except UnicodeDecodeError:
        return DecodedText(_decode_windows_1252(data), WINDOWS_1252)


def _decode_with_bom(data: bytes, encoding: TextEncoding) -> DecodedText:
    try:
        text = data[len(encoding.bom) :].decode(encoding.name)
    except UnicodeDecodeError as exc:
        if encoding.name == "utf-8":
            # A BOM does not make the rest UTF-8; the lossless fallback keeps its bytes.
            return DecodedText(_decode_windows_1252(data), WINDOWS_1252)
        raise BinaryContent(f"it starts with a {encoding.label} mark but is not valid") from exc
    if "\x00" in text:
        raise BinaryContent("it contains NUL characters")
    return DecodedText(text, encoding)


def _decode_windows_1252(data: bytes) -> str:
    return codecs.charmap_decode(data, "strict", _WINDOWS_1252)[0]


def binary_reason(data: bytes) -> str | None:
    """Why `data` (without a BOM) is not text, or None when it looks like text."""
    if b"\x00" in data:
        return "it contains NUL bytes"
    sample = data[:_SNIFF_BYTES]
    controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    if controls > len(sample) * _MAX_CONTROL_SHARE:
        return "it is full of control bytes"
    return None


def encode_text(text: str, encoding: TextEncoding) -> bytes:
    """`text` as `encoding` stores it, BOM first; UnencodableText names the first misfit."""
    try:
        if encoding.name == WINDOWS_1252.name:
            body = codecs.charmap_encode(text, "strict", _WINDOWS_1252_ENCODE)[0]
        else:
            body = text.encode(encoding.name)
    except UnicodeEncodeError as exc:
        raise UnencodableText(exc.object[exc.start], encoding) from exc
    return encoding.bom + body


def read_text_file(path: Path) -> DecodedText:
    """The decoded text of the file at `path`; OSError or BinaryContent when unreadable."""
    return decode_bytes(path.read_bytes())


def file_encoding(path: Path) -> TextEncoding:
    """The encoding to write `path` back in: its own, or UTF-8 when it is new or not text."""
    try:
        return read_text_file(path).encoding
    except (OSError, BinaryContent):
        return UTF8
