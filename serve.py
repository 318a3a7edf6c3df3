"""Start dpsynth: ``streamlit run serve.py`` (``bash scripts/run.sh`` does), with Streamlit's options after it.

The app is app.py, served by Streamlit as ``st.App``, Streamlit's public way to put middleware around its
web application: every response, the page and its static files included, carries the security headers of
``ui.server.SecurityHeaders`` and does not name the server. Run as ``streamlit run app.py`` the app works
the same but without them.
"""

import streamlit as st
from starlette.middleware import Middleware

from ui import server

server.drop_server_banner()  # first: uvicorn is importing this module from inside its Config.load
app = st.App("app.py", middleware=[Middleware(server.SecurityHeaders)], lifespan=server.lifespan)
