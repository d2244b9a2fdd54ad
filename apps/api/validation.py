"""Validation once per model: a serializer checks what the model's ``clean()`` checks.

``ModelClean`` runs the model's ``clean()`` on the object as the request would leave it (the
instance being changed, or a new one, with the validated values set), so the API refuses what
the forms and the admin refuse, with the model's own words, and no message is typed twice. A
``ValidationError`` per field stays per field (``{"target": [...]}``), as DRF shows its own.
"""

from __future__ import annotations

import copy
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.fields import get_error_detail


class ModelClean:
    """A ``ModelSerializer`` mixin: ``validate()`` ends with the model's ``clean()``."""

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)  # type: ignore[misc]
        instance = getattr(self, "instance", None)
        candidate = copy.copy(instance) if instance is not None else self.Meta.model()  # type: ignore[attr-defined]
        concrete = {f.name for f in candidate._meta.concrete_fields}
        for name, value in attrs.items():
            if name in concrete:
                setattr(candidate, name, value)
        try:
            candidate.clean()
        except DjangoValidationError as error:
            raise serializers.ValidationError(get_error_detail(error)) from None
        return attrs
