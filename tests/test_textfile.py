"""Lossless text decoding: readable text for the model, the same bytes written back."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentls.textfile import (
    UTF8,
    WINDOWS_1252,
    BinaryContent,
    TextEncoding,
    UnencodableText,
    decode_bytes,
    encode_text,
    file_encoding,
)
from agentls.workspace.view import FileEdit, write_edit


@pytest.mark.parametrize(
    ("data", "text", "label"),
    [
        ("café\n".encode(), "café\n", "UTF-8"),
        (codecs.BOM_UTF8 + "café\r\n".encode(), "café\r\n", "UTF-8 with BOM"),
        (codecs.BOM_UTF16_LE + "café".encode("utf-16-le"), "café", "UTF-16 LE with BOM"),
        (codecs.BOM_UTF16_BE + "café".encode("utf-16-be"), "café", "UTF-16 BE with BOM"),
        ("# café crème\n".encode("latin-1"), "# café crème\n", "windows-1252"),
        ("“quoted” – 5 €".encode("cp1252"), "“quoted” – 5 €", "windows-1252"),
    ],
)
def test_known_encodings_decode_to_readable_text(data: bytes, text: str, label: str) -> None:
    decoded = decode_bytes(data)
    assert (decoded.text, decoded.encoding.label) == (text, label)
    assert encode_text(decoded.text, decoded.encoding) == data


def test_the_five_bytes_cp1252_leaves_undefined_keep_their_own_characters() -> None:
    decoded = decode_bytes(b"\x81\x8d\x8f\x90\x9d \xe9")
    assert decoded.text == "\x81\x8d\x8f\x90\x9d é"
    assert encode_text(decoded.text, decoded.encoding) == b"\x81\x8d\x8f\x90\x9d \xe9"


def test_a_bom_followed_by_invalid_utf8_falls_back_without_losing_bytes() -> None:
    data = codecs.BOM_UTF8 + b"caf\xe9"
    decoded = decode_bytes(data)
    assert decoded.encoding == WINDOWS_1252
    assert encode_text(decoded.text, decoded.encoding) == data


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x7fELF\x02\x01\x01\x00\x00", "NUL bytes"),
        (bytes(range(1, 32)) * 4, "control bytes"),
        (codecs.BOM_UTF16_LE + b"a\x00b", "not valid"),
        (codecs.BOM_UTF16_LE + "a\x00".encode("utf-16-le"), "NUL characters"),
    ],
)
def test_binary_content_is_refused_with_the_reason(data: bytes, reason: str) -> None:
    with pytest.raises(BinaryContent, match=reason):
        decode_bytes(data)


def test_text_with_escapes_and_form_feeds_is_still_text() -> None:
    data = b"\x1b[31mred\x1b[0m\n\x0cpage two\n"
    assert decode_bytes(data).text == data.decode()


def test_a_character_the_encoding_lacks_is_named() -> None:
    with pytest.raises(UnencodableText, match=r"windows-1252.*'→' \(U\+2192\)"):
        encode_text("a → b", WINDOWS_1252)


def test_file_encoding_of_a_new_or_binary_file_is_utf8(tmp_path: Path) -> None:
    (tmp_path / "blob").write_bytes(b"\x00\x01")
    (tmp_path / "latin").write_bytes(b"caf\xe9")
    assert file_encoding(tmp_path / "missing") == UTF8
    assert file_encoding(tmp_path / "blob") == UTF8
    assert file_encoding(tmp_path / "latin") == WINDOWS_1252


def test_write_edit_writes_in_the_encoding_on_disk_when_the_edit_names_none(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(codecs.BOM_UTF16_BE + "old".encode("utf-16-be"))
    write_edit(FileEdit(path, "old", "new é"))
    assert path.read_bytes() == codecs.BOM_UTF16_BE + "new é".encode("utf-16-be")


def test_write_edit_uses_the_encoding_the_edit_carries(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    write_edit(FileEdit(path, None, "été\n", encoding=TextEncoding("windows-1252")))
    assert path.read_bytes() == b"\xe9t\xe9\n"


@given(st.binary(max_size=300))
def test_any_bytes_are_refused_as_binary_or_written_back_exactly(data: bytes) -> None:
    try:
        decoded = decode_bytes(data)
    except BinaryContent:
        return
    assert encode_text(decoded.text, decoded.encoding) == data
    # Always sendable as JSON: no lone surrogates.
    json.dumps(decoded.text, ensure_ascii=False).encode("utf-8")
