"""Data: pick a bundled dataset or upload a CSV, and declare what is public."""

import streamlit as st

import app_state
from app_state import core, plain

app_state.start_page()

st.title("Data")

ss = st.session_state


def _on_bundled():
    if ss["bundled_choice"] is not None:
        app_state.set_bundled(ss["bundled_choice"])
        ss.pop("upload_error", None)


def _on_upload():
    # Runs before the page: a failed file leaves the current dataset in place.
    upload = ss["uploader"]
    if upload is None:
        return
    try:
        df = core.load_csv(upload)
        app_state.release_upload(upload)
        app_state.set_uploaded(upload.name, df)
    except core.DataError as err:
        ss["upload_error"] = str(err)
    except Exception as err:  # noqa: BLE001 - the file is refused in a sentence, never with a traceback
        app_state.log_unexpected(err)
        ss["upload_error"] = ("The file could not be prepared for synthesis; check its values (for example infinite or "
                             "extremely large numbers) and try again.")
    else:
        ss.pop("upload_error", None)
        ss["bundled_choice"] = None


current = app_state.dataset()
choice = app_state.start_value("bundled_choice", current.name if current.source == "bundled" else None)
left, right = st.columns(2)
bundled = list(core.BUNDLED)
left.selectbox("Bundled dataset", bundled, format_func=lambda n: core.BUNDLED[n].title,
               index=None if choice is None else bundled.index(choice),
               placeholder="Choose a bundled dataset", key="bundled_choice", on_change=_on_bundled)
right.file_uploader("…or upload a CSV file", type=["csv", "txt"], key="uploader", on_change=_on_upload)

if "upload_error" in st.session_state:
    app_state.show_error(st.session_state["upload_error"] + " The previous dataset is still loaded.")

ds = app_state.dataset()
st.subheader(f"{plain(ds.name)}: {len(ds.df):,} rows, {ds.df.shape[1]} columns")
if ds.source == "bundled":
    st.caption(plain(core.BUNDLED[ds.name].description) + " Its public schema is declared in data/.")
st.dataframe(app_state.displayable(ds.df.head(50)), height=220)

st.subheader("What is public")
st.markdown(
    "A DP synthesis may only use category lists and numeric bounds that are **public** — known "
    "without looking at the data. Edit them below and tick *public* once a domain is one you could publish."
)
derived = ds.schema.derived_columns
if derived:
    st.warning(
        f"{len(derived)} column(s) have bounds or categories read off the data: "
        + plain(", ".join(derived))
        + ". Any synthesis using them is labelled **not DP** until you declare their domain.",
        icon="⚠️",
    )

table = core.schema_table(ds.schema)
edited = st.data_editor(
    table,
    key=f"schema_editor_{ds.fingerprint[:12]}",
    hide_index=True,
    disabled=["column", "missing", "reason"],
    column_config={
        "kind": st.column_config.SelectboxColumn("kind", options=list(core.KINDS), required=True),
        "categories": st.column_config.TextColumn("categories", help="Comma-separated list of every possible value"),
        "lower": st.column_config.NumberColumn("lower"),
        "upper": st.column_config.NumberColumn("upper"),
        "public": st.column_config.CheckboxColumn("public", help="The domain is declared, not read off the data"),
        "missing": st.column_config.NumberColumn("missing", help="Missing values in the data"),
    },
)

modelled = ds.schema.used
keys = st.multiselect("Key variables (what an intruder may know)", modelled,
                      default=[k for k in ds.schema.keys if k in modelled], key=f"keys_{ds.fingerprint[:12]}")
sensitive = st.selectbox("Sensitive column", [None, *modelled],
                         index=([None, *modelled].index(ds.schema.sensitive) if ds.schema.sensitive in modelled else 0),
                         key=f"sensitive_{ds.fingerprint[:12]}")

if not edited.equals(table) or tuple(keys) != ds.schema.keys or sensitive != ds.schema.sensitive:
    try:
        new = core.schema_from_table(edited, ds.schema, keys=keys, sensitive=sensitive)
    except ValueError as err:
        app_state.show_error(str(err))
    else:
        if new != ds.schema:
            app_state.set_schema(new)
            st.rerun()
