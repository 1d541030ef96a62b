"""The versioned JSON API: routers from each app, composed here (the composition root)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.utils import check_csrf

from alerts import api as alerts_api
from alerts import api_checks
from metrics import api_read, api_upload
from metrics.auth import Caller, caller_from_request
from metrics.errors import ApiError


class SessionOrToken:
    """Accept a browser session or an app's Bearer token; `request.auth` becomes a Caller."""

    openapi_type = "http"
    openapi_scheme = "bearer"
    # What ninja reads to list the scheme under components.securitySchemes and on every operation that needs it.
    openapi_security_schema = {"type": "http", "scheme": "bearer",
                               "description": "An app's upload token; a signed-in browser session works too."}

    def __call__(self, request: HttpRequest) -> Caller | None:
        caller = caller_from_request(request)
        if caller is not None and caller.token is None and request.method not in ("GET", "HEAD", "OPTIONS"):
            # A browser session writes only with the CSRF token, as Django's forms do; a Bearer token
            # is not sent by browsers on their own, so it needs no such check.
            if check_csrf(request) is not None:
                raise ApiError(403, "X-CSRFToken", "CSRF check failed: send the csrftoken cookie's value")
        return caller


class PerfAPI(NinjaAPI):
    """The API, whose OpenAPI document also lists the 401 every operation needing a caller answers without one
    (the auth layer answers it, so no view declares it)."""

    def get_openapi_schema(self, *, path_prefix: str | None = None, path_params: dict | None = None):
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        # The upload operation states its own scheme (a token only, no session): it must be defined too.
        schema.setdefault("components", {}).setdefault("securitySchemes", {}).setdefault(
            "BearerToken", {"type": "http", "scheme": "bearer", "description": "An app's upload token."})
        errors_ref = {"$ref": "#/components/schemas/ErrorsOut"}
        for operations in schema["paths"].values():
            for op in operations.values():
                # ninja keys responses by int status; a view may already declare its 401
                if isinstance(op, dict) and op.get("security") and not {401, "401"} & set(op["responses"]):
                    op["responses"][401] = {"description": "Unauthorized: no session and no valid Bearer token",
                                            "content": {"application/json": {"schema": errors_ref}}}
        return schema


api = PerfAPI(
    title="perfplatform",
    version="1",
    description="Mobile performance metrics: uploads from CI, builds, series, alerts and pre-merge checks.",
    urls_namespace="api",
    openapi_url="/schema",
    docs_url="/docs",
    auth=SessionOrToken(),
)
api.add_router("", api_upload.router)
api.add_router("", api_read.router)
api.add_router("", alerts_api.router)
api.add_router("", api_checks.router)


def _errors(api_: NinjaAPI, request: HttpRequest, status: int, errors: list[dict[str, str]]) -> HttpResponse:
    return api_.create_response(request, {"errors": errors}, status=status)


@api.exception_handler(ValidationError)
def _validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = []
    for err in exc.errors:
        loc = [str(p) for p in err.get("loc", ()) if p not in ("filters",)]
        # A JSON body's fields are named as in the body ("status"), parameters with their place.
        while loc[:1] == ["body"]:
            loc = loc[1:]
        errors.append({"path": ".".join(loc), "message": err.get("msg", "invalid")})
    return _errors(api, request, 400, errors)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = _errors(api, request, 401, [{"path": "Authorization", "message": "sign in or send 'Authorization: Bearer <token>'"}])
    response["WWW-Authenticate"] = 'Bearer realm="perfplatform"'
    return response


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return _errors(api, request, exc.status_code, [{"path": "", "message": str(exc)}])


@api.exception_handler(ApiError)
def _api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
    return _errors(api, request, exc.status, [{"path": exc.path, "message": exc.message}])


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _errors(api, request, 404, [{"path": "", "message": "not found"}])
