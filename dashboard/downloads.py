"""A file built on a download click stays until its page's next script run.

The Explorer builds its downloads only when clicked (``st.download_button`` with a callable:
a file handed over at every rerun would be stored and sent on every slider move).  Streamlit
1.67 stores the built file unreferenced by any session, and every script run that ends, of
*any* session, sweeps unreferenced files: the first sweep marks the file, the second deletes
it.  In a class of fifteen sessions two runs end within a fraction of a second, so the
browser's fetch of the file could meet a 404 (the fault benchmark saw it on 1 to 4 of 15
downloads, with or without the proxy).

:func:`install` wraps the running server's media file manager (its instance, not
Streamlit's class; ``dashboard._compat.keep_built_downloads``) so that the built
file is referenced by the session that clicked, at a coordinate of its own.  Streamlit
drops a session's references when that session's next run starts, so the file is then swept as before: a download click (``on_click="ignore"``) starts
no run, and a later slider move frees the file.  Where the internals are not as expected
(another Streamlit) nothing is wrapped and that is logged once; under AppTest there is no
server and nothing to wrap.
"""

from __future__ import annotations

from dashboard import _compat as compat


def install():
    """Keep built downloads on the running Streamlit server (idempotent); ``False`` where
    there is no server or its media manager is not the one the compat module knows."""
    manager = compat.media_file_manager()
    return manager is not None and compat.keep_built_downloads(manager)
