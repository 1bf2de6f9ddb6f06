"""The web page served by the LangGraph server (``http.app`` in ``langgraph.json``).

`graph_agent.web.app` is the server side (page, uploads, a thread's files); ``static/`` is
the page itself: plain HTML, CSS and JavaScript, with nothing fetched from elsewhere.
"""
