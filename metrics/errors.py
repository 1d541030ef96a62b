"""An API error that names the field at fault; rendered as {"errors": [{"path", "message"}]}."""


class ApiError(Exception):
    def __init__(self, status: int, path: str, message: str):
        super().__init__(message)
        self.status = status
        self.path = path
        self.message = message
