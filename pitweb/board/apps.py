from django.apps import AppConfig


class BoardConfig(AppConfig):
    name = "pitweb.board"
    label = "board"

    def ready(self) -> None:
        # the refresh task is sent by name (``changes.board_changed``): registered in every
        # process that may send it, not only in the workers that discover tasks
        from pitweb.board import tasks  # noqa: F401
