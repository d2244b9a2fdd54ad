"""Gadgets through the API (read-only)."""

from __future__ import annotations

from rest_framework import serializers, viewsets

from apps.api.conditional import ConditionalGet

from .models import Gadget


class GadgetSerializer(serializers.ModelSerializer):
    class Meta:
        model = Gadget
        fields = ["id", "name", "region", "status", "reason"]


class GadgetViewSet(ConditionalGet, viewsets.ReadOnlyModelViewSet):
    """The tests' gadgets."""

    serializer_class = GadgetSerializer
    queryset = Gadget.objects.all()
    ordering = ["pk"]


ROUTES = [("gadgets", GadgetViewSet, "gadget")]
