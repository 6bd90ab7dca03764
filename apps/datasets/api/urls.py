from django.urls import path

from apps.datasets.api import views

urlpatterns = [
    path("releases", views.ReleaseListView.as_view(), name="release-list"),
    path("releases/<int:version>", views.ReleaseDetailView.as_view(), name="release-detail"),
]
