"""The operator console (docs/rules/console.md): server-rendered pages under ``/console/``.

    app.py        build_console(svc): the mounted sub-application, its error pages and security headers
    auth.py       Signed (the signed-in Viewer), Viewer.require(capability), Viewer.form(request) (CSRF)
    render.py     page(request, template, context, viewer=...): a template inside the layout
    forms.py      bounded reading of typed values, cursors
    queries.py    the pages' read-only SQL
    routes/       one module per navigation item; routes parse, call a service, render
    templates/    Jinja2 (autoescaped), one layout (base.html)
    static/       console.css (and console.js, optional enhancement), served from the package

How to add a page: /work/notes/console-skeleton.md (and this package's routes for examples).
"""
