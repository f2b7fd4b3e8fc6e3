"""Errors a researcher can act on."""


class InputError(ValueError):
    """Bad input: the message names the file, the row or key, and what to do."""

    def __init__(self, where: str, problem: str, fix: str):
        self.where = where
        self.problem = problem
        self.fix = fix
        super().__init__(f"{where}: {problem}. {fix}")
