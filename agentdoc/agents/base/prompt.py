"""What a turn sends besides its text: the pictures a prompt names, read and checked by agentdoc.

Each protocol renders these its own way (Claude: an ``image`` content block in a stream-json
user message; ACP: an ``image`` content block with ``mimeType`` and ``data``).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Literal

ImageType = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]


@dataclass(frozen=True, slots=True)
class ImagePart:
    """One local picture, exactly as read from disk."""

    path: str  # as the prompt named it, for messages and the text that stands in for it
    media_type: ImageType
    data: bytes

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")
