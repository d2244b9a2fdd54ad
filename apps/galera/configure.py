"""Adding and editing Galera clusters and their nodes in the app (Admins), with the live
validation of ``apps.lib.liveforms``. A node's password is a reference (an environment variable
or a file under the secrets directory), never the password itself."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from apps.accounts.roles import refuse_unless
from apps.lib import liveforms
from apps.regions import editing
from apps.regions.models import Region

from .admin import NodeForm
from .models import CLUSTER_FIELDS, Cluster, Node


class ClusterForm(forms.ModelForm):
    class Meta:
        model = Cluster
        fields = CLUSTER_FIELDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["region"].queryset = Region.objects.shown()


def edit_cluster(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    cluster, form = editing.subject_form(request, ClusterForm, pk)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid():
        saved = form.save()
        if cluster is None:
            return redirect("galera:add-node", pk=saved.pk)  # a cluster needs a node to poll
        return redirect("galera:cluster", pk=saved.pk)
    nodes = list(cluster.nodes.all()) if cluster else []
    context = {"form": form, "cluster": cluster, "nodes": nodes}
    return render(request, "galera/edit.html", context, status=400 if form.errors else 200)


def edit_node(request: HttpRequest, pk: int | None = None, node: int | None = None) -> HttpResponse:
    """A new node of cluster ``pk``, or node ``node`` of it."""
    refuse_unless(request, "galera.change_node" if node else "galera.add_node")
    cluster = get_object_or_404(Cluster, pk=pk)
    instance = get_object_or_404(Node, pk=node, cluster=cluster) if node else Node(cluster=cluster)
    form = NodeForm(request.POST or None, instance=instance)
    if liveforms.is_check(request):
        return liveforms.check(request, form)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("galera:edit", pk=cluster.pk)
    context = {"form": form, "cluster": cluster, "node": instance if node else None}
    return render(request, "galera/edit_node.html", context, status=400 if form.errors else 200)
