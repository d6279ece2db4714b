"""Signing people in to the service's web pages: passwords, server-side sessions, CSRF tokens and the
failed sign-in throttle, for any number of signed-in areas ("realms").

A realm is one area with its own users and cookie: the operator console (``console``, users in
``operators``) and the partner portal (``partner``, its partner users). Both share the tables
``web_sessions`` and ``web_signin_failures`` (keyed by realm), this package's rules and its HTTP
helpers; each realm only says where its users are (``signin.UserLookup``) and what its cookie is
called (``realm.Realm``). Nothing here knows operators or partners.

    passwords.py   argon2id hashing (argon2-cffi), generated passwords
    realm.py       Realm: name, cookie, paths, lifetimes
    throttle.py    the pure throttle rules (how long to slow, when to refuse)
    repository.py  the SQL of sessions and failures
    sessions.py    open / find / end a session, end every session of a user
    signin.py      sign_in(): throttle, verify, open a session
    http.py        cookies, CSRF checks, security headers (CSP) for the HTML responses
    viewer.py      session_dependency(load): an area's "who is signed in" dependency
    login_routes.py login_router(...): GET/POST {path}/login and POST {path}/logout of a realm
    refusals.py    NotAllowed (403 page), PageNotFound (404 page)
    site.py        build_area(...): an area's sub-app (static files, HTML error pages, headers)
    layout.py      Site and environment(): the shared layout and login templates (templates/webauth/)

A new signed-in area is a Realm, a viewer loader, a Site, its routes and its pages; the frame,
sign-in, sign-out and error pages come from here.
"""
