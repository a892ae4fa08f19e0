"""Lesson: the solver's sliders on top and what each parameter does, on one projector screen."""

from dashboard.guard import guard
from dashboard.lesson import show_lesson
from dashboard.sidebar import page_setup, show_config_problems


def lesson(config):
    """What a slider move redraws (:func:`page_setup`'s ``live``)."""
    show_config_problems(toast=True)
    with guard("the lesson"):
        show_lesson(config)


page_setup("Lesson", live=lesson, controls="page")
