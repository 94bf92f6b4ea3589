"""The board's announcement, where the apps that called it from here still look for it
(``pitweb.board.changes`` is its home)."""

from pitweb.board.changes import board_changed

__all__ = ["board_changed"]
