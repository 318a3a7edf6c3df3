"""Data: pick a bundled dataset or upload a CSV, and declare what is public."""

import streamlit as st

import dpsynth_core as core
from ui import errors, link, state, text, widgets
from ui.text import plain

errors.start_page()

st.title("Data")

ss = st.session_state


def _on_bundled():
    if ss["bundled_choice"] is not None:
        state.set_bundled(ss["bundled_choice"])
        ss.pop("upload_error", None)
        ss.pop("schema_error", None)


def _on_upload():
    # Runs before the page: a failed file leaves the current dataset in place.
    upload = ss["uploader"]
    if upload is None:
        return
    try:
        df = core.load_csv(upload)
        state.set_uploaded(upload.name, df)
        link.apply_pending()  # a shared link that was waiting for this file
    except core.DataError as err:
        ss["upload_error"] = str(err)
    except Exception as err:  # noqa: BLE001 - the file is refused in a sentence, never with a traceback
        errors.log_unexpected(err)
        ss["upload_error"] = ("The file could not be prepared for synthesis; check its values (for example infinite or "
                             "extremely large numbers) and try again.")
    else:
        ss.pop("upload_error", None)
        ss.pop("schema_error", None)
        ss["bundled_choice"] = None


current = state.dataset()
choice = widgets.start_value("bundled_choice", current.name if current.source == "bundled" else None)
left, right = st.columns(2)
bundled = list(core.BUNDLED)
left.selectbox("Bundled dataset", bundled, format_func=lambda n: core.BUNDLED[n].title,
               index=None if choice is None else bundled.index(choice),
               placeholder="Choose a bundled dataset", key="bundled_choice", on_change=_on_bundled)
right.file_uploader("…or upload a CSV file", type=["csv", "txt"], key="uploader", on_change=_on_upload)

if "upload_error" in st.session_state:
    errors.show_error(st.session_state["upload_error"] + " The previous dataset is still loaded.")

ds = state.dataset()
st.subheader(f"{plain(ds.name)}: {len(ds.df):,} rows, {ds.df.shape[1]} columns")
if ds.source == "bundled":
    st.caption(plain(core.BUNDLED[ds.name].description) + " Its public schema is declared in data/.")
st.dataframe(text.displayable(ds.df.head(50)), height=220, placeholder="")  # a missing value blank, not "None"

st.subheader("What is public")
st.markdown(
    "A DP synthesis may only use category lists, bounds and flags that are **public**: known without looking "
    "at the data. Each value counts as public only once you declare it: type it in the table, tick *public* "
    "to declare every value shown in a row, or use a button below for every column at once. The highlighted "
    "*read off the data* column lists the values of each row that are not declared yet."
)
schema = ds.schema
version = ss.get("schema_version", 0)
undeclared = schema.undeclared_columns
if undeclared:
    st.warning(
        f"{len(undeclared)} of {len(schema.columns)} column(s) still have values read off the data: "
        + plain(", ".join(undeclared))
        + ". Any synthesis using them is labelled **not DP** until you declare them.",
        icon="⚠️",
    )
else:
    st.success("Every column's domain is declared public, excluded columns included: a synthesis by a DP "
               "method can be labelled DP.")


def _declare(fields, kinds):
    state.set_schema(state.dataset().schema.declare(fields, kinds=kinds))


def _pending(fields, kinds) -> bool:
    return any(c.kind in kinds and c.derived_fields & set(fields) for c in schema.columns.values())


BULK = [
    ("Declare all categories as listed", {"kind", "categories"}, ("categorical",), "declare_categories",
     "Every categorical column: its kind and its list of categories, as shown in the table, become public."),
    ("Use these bounds", {"kind", "lower", "upper"}, ("numeric",), "declare_bounds",
     "Every numeric column: its kind and its lower and upper bounds, as shown in the table, become public."),
    ("Declare kinds, flags and precision as shown", {"kind", "integer", "nullable", "decimals"}, core.KINDS,
     "declare_flags", "Every column: its kind (excluded ones too), its integer and nullable flags and its "
     "decimals, as shown in the table, become public."),
]
for where, (label, fields, kinds, key, helptext) in zip(st.columns(len(BULK)), BULK):
    where.button(label, key=key, help=helptext, on_click=_declare, args=(fields, kinds),
                 disabled=not _pending(fields, kinds), width="stretch")

excluded = core.schema.excluded_note(schema)
if excluded:
    st.info(plain(excluded))
table = core.schema_table(schema)
NOTE = core.schema.DERIVED_NOTE


def _highlight(row):
    # Styles reach only the columns that cannot be edited: the name and the list of values read off the data.
    colour = "background-color: #fde2b8" if row[NOTE] else ""
    return [colour if c in ("column", NOTE) else "" for c in row.index]


edited = st.data_editor(
    table.style.apply(_highlight, axis=1),
    key=f"schema_editor_{ds.fingerprint[:12]}_{version}",
    hide_index=True,
    placeholder="",  # a bound or list that does not apply (a category's bounds) is blank, not "None"
    height=min(36 * (len(table) + 1) + 4, 720),  # every row of a 13+ column table without scrolling
    disabled=["column", NOTE, "missing", "reason"],
    column_config={
        "kind": st.column_config.SelectboxColumn("kind", options=list(core.KINDS), required=True),
        "categories": st.column_config.TextColumn("categories", help="Comma-separated list of every possible value"),
        "lower": st.column_config.NumberColumn("lower"),
        "upper": st.column_config.NumberColumn("upper"),
        "integer": st.column_config.CheckboxColumn("integer", width="small"),
        "nullable": st.column_config.CheckboxColumn("nullable", width="small"),
        "decimals": st.column_config.NumberColumn("decimals", min_value=0,
                                                  max_value=core.constraints.SCHEMA_DECIMALS_MAX, step=1, width="small",
                                                  help="Synthetic values are written rounded to this many decimals"),
        "public": st.column_config.CheckboxColumn("public", width="small",
                                                  help="Tick to declare every value of the row as shown"),
        NOTE: st.column_config.TextColumn(NOTE, width="medium", help="Values of the row not declared yet"),
        "missing": st.column_config.NumberColumn("missing", help="Missing values in the data (confidential)"),
    },
)

modelled = schema.used
keys = st.multiselect("Key variables (what an intruder may know)", modelled,
                      default=[k for k in schema.keys if k in modelled], key=f"keys_{ds.fingerprint[:12]}")
sensitive = st.selectbox("Sensitive column", [None, *modelled],
                         index=([None, *modelled].index(schema.sensitive) if schema.sensitive in modelled else 0),
                         key=f"sensitive_{ds.fingerprint[:12]}")

if not edited.equals(table) or tuple(keys) != schema.keys or sensitive != schema.sensitive:
    try:
        new = core.schema_from_table(edited, schema, keys=keys, sensitive=sensitive)
    except ValueError as err:
        errors.show_error(str(err))
    else:
        if new != schema:
            state.set_schema(new)
            st.rerun()


def _on_schema_upload():
    upload = ss["schema_uploader"]
    if upload is None:
        return
    try:
        new = core.schema.schema_for_data(upload.getvalue(), state.dataset().schema)
    except ValueError as err:
        ss["schema_error"] = str(err)
    else:
        ss.pop("schema_error", None)
        state.set_schema(new)
        # The role widgets keep their own state: give them the file's roles (allowed here, before they are drawn).
        fp = state.dataset().fingerprint[:12]
        ss[f"keys_{fp}"] = [k for k in new.keys if k in new.used]
        ss[f"sensitive_{fp}"] = new.sensitive if new.sensitive in new.used else None


st.subheader("Keep the schema")
st.caption("The schema is your work: save it as JSON and load it again later (the format of data/*.schema.json). "
           "Values still read off the data are saved marked *derived*, so keep the file with the data, not with a "
           "release. Uploading the same data again in this session keeps its schema.")
left, right = st.columns(2)
widgets.download("Download the schema (JSON)", lambda s=schema: s.to_json().encode("utf-8"),
                   file_name=f"{core.release.safe_name(ds.name)}.schema.json", mime="application/json",
                   key="download_schema", where=left)
right.file_uploader("Upload a schema (JSON)", type=["json"], key="schema_uploader", on_change=_on_schema_upload)
if "schema_error" in ss:
    errors.show_error(ss["schema_error"] + " The schema in the table is unchanged.")
