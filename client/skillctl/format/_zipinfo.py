"""The zip's end-of-central-directory record, read by the standard library's own parser.

``zipfile`` has the reader and its field indexes, but as private names that the type stubs do
not declare. This module is the one place that touches them, and gives the rest of the archive
code a typed record instead of a list indexed by private constants.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from typing import IO, Any

_zipfile: Any = zipfile  # the private names below are not in the stubs

# The zip64 end record and its locator sit between the central directory and the end record.
ZIP64_END_SIZE: int = _zipfile.sizeEndCentDir64 + _zipfile.sizeEndCentDir64Locator


@dataclass(frozen=True)
class EndRecord:
    entries_total: int  # entries the directory declares
    location: int  # offset of the end record itself
    comment_size: int
    directory_size: int
    zip64: bool  # the sizes came from a zip64 end record


def end_record(fh: IO[bytes]) -> EndRecord | None:
    """The end record of the zip in ``fh``, or None when there is none."""
    record = _zipfile._EndRecData(fh)
    if not record:
        return None
    return EndRecord(
        entries_total=int(record[_zipfile._ECD_ENTRIES_TOTAL]),
        location=int(record[_zipfile._ECD_LOCATION]),
        comment_size=int(record[_zipfile._ECD_COMMENT_SIZE]),
        directory_size=int(record[_zipfile._ECD_SIZE]),
        zip64=record[_zipfile._ECD_SIGNATURE] == _zipfile.stringEndArchive64,
    )
