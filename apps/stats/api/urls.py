from django.urls import path

from apps.stats.api import views

urlpatterns = [
    path("stats", views.StatsView.as_view(), name="stats-api"),
]
