# TrajHub: `make run` serves the site with demo data; `make test` runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
# Absolute links (the API's `url`, the upload page, feeds, sitemaps, the CLI) come from
# TRAJHUB_SITE_URL, which tasks and commands read too (they have no request): it follows PORT
# unless set.
SITE_URL := $(or $(TRAJHUB_SITE_URL),http://127.0.0.1:$(PORT))

.PHONY: install run test lint bench clean

$(BIN)/.installed: requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing dependencies from requirements.txt into $(VENV) ..."
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@# The project itself, editable and without dependencies: puts the `trajhub` command in the venv.
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

install: $(BIN)/.installed

run: install
	@mkdir -p var
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py demo_data --if-empty --count 36
	@# Whether screenshots are read for text (tesseract), and so which images are public.
	@$(BIN)/python manage.py ocr_status
	@# Commands run beside the site (build_release, the shell) read it there: their mails link here.
	@printf '%s\n' "$(SITE_URL)" > var/site_url
	@echo "TrajHub at $(SITE_URL)/ (Ctrl-C stops the site, the worker and beat)"
	@# The worker (with beat inside it) runs beside the site on the filesystem broker; it stops
	@# when the site stops, whether by Ctrl-C or because runserver could not start.
	@export TRAJHUB_SITE_URL=$(SITE_URL); \
	  $(BIN)/celery -A config worker --beat --pool=solo --loglevel=warning & worker=$$!; \
	  trap 'kill -TERM $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT INT TERM; \
	  $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: install
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache
