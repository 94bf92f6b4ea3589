from django.apps import AppConfig

from pitweb.jobs.sweeps import register_sweep


class BoardConfig(AppConfig):
    name = "pitweb.board"
    label = "board"

    def ready(self) -> None:
        # the refresh task is sent by name (``changes.board_changed``): registered in every
        # process that may send it, not only in the workers that discover tasks
        from pitweb.board import store, tasks  # noqa: F401

        register_sweep("board", store.refresh_all)  # a board whose refresh message was lost
