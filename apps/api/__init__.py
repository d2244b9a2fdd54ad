"""The API plumbing every app's ``api.py`` shares: lists (paging, filters, ordering),
conditional GET, rate limits, the OpenAPI schema class and JSON errors, and the API's own
resources (its keys, the audit trail: ``keys.py``). A plain package, not an app: no models; API
keys and users live in ``apps.accounts``, below it."""
