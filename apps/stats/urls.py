from django.urls import path

from apps.stats import views

urlpatterns = [
    path("stats/", views.stats_page, name="stats"),
]
