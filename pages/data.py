"""Data: pick a bundled dataset or upload a CSV, and declare what is public."""

import streamlit as st

import dpsynth_core as core
from ui import errors, link, spending, state, text, widgets
from ui.text import plain

errors.start_page()

st.title("Data")

ss = st.session_state


def _on_bundled():
    if ss["bundled_choice"] is not None:
        state.set_bundled(ss["bundled_choice"])
        ss.pop("upload_error", None)
        ss.pop("schema_error", None)
        ss.pop("pending_link", None)  # another dataset chosen: a link's file is no longer awaited


def _on_upload():
    # Runs before the page: a failed file leaves the current dataset in place.
    upload = ss["uploader"]
    if upload is None:  # the file left the box: the sentence about it goes too
        ss.pop("upload_error", None)
        return
    try:
        df = core.load_csv(upload)
        state.set_uploaded(upload.name, df)
        link.apply_pending()  # a shared link that was waiting for this file
    except core.DataError as err:
        ss["upload_error"] = (upload.name, str(err))
    except Exception as err:  # noqa: BLE001 - the file is refused in a sentence, never with a traceback
        errors.log_unexpected(err)
        ss["upload_error"] = (upload.name, "The file could not be prepared for synthesis; check its values (for "
                                           "example infinite or extremely large numbers) and try again.")
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
    # Named, because the sentence can outlive the file's turn in the box: a file the browser refuses for its size
    # never reaches the server (Streamlit's uploader sends nothing and keeps the earlier file), so nothing here
    # can clear it then.
    name, sentence = st.session_state["upload_error"]
    errors.show_error(f"{name} was not loaded: {sentence[0].lower()}{sentence[1:]} The previous dataset is still "
                      "loaded.")

ds = state.dataset()
st.subheader(f"{plain(ds.name)}: {len(ds.df):,} rows, {ds.df.shape[1]} columns")
if ds.source == "bundled":
    st.caption(plain(core.BUNDLED[ds.name].description) + " Its public schema is declared in data/.")
st.dataframe(text.displayable(ds.df.head(50)), height=220, placeholder="")  # a missing value blank, not "None"

st.subheader("What is public")
st.markdown(
    "A DP synthesis may only use category lists, bounds, special values and flags that are **public**. Each "
    "value has a source: **declared** (typed here or loaded from a schema file), **estimated privately** (by a "
    "differentially private mechanism, which costs ε), or **read off the data** (not DP: the highlighted "
    "column lists them). The quickest honest path: estimate privately every value still read off the data."
)
schema = ds.schema
version = ss.get("schema_version", 0)
undeclared = schema.undeclared_columns
if undeclared:
    st.warning(
        f"{len(undeclared)} of {len(schema.columns)} column(s) still have values read off the data: "
        + plain(", ".join(undeclared))
        + ". Any synthesis using them is labelled **not DP** until you estimate them privately or declare them.",
        icon="⚠️",
    )
else:
    st.success("Every column's domain is public (declared or estimated privately), excluded columns included: "
               "a synthesis by a DP method can be labelled DP.")
if schema.estimate_steps:
    st.caption(f"This schema's private estimates spent ε = {schema.estimate_epsilon:.4g} of the data (δ = "
               f"{schema.estimate_delta:.2g}); every synthesis with it takes that ε off its total and lists the "
               "steps in its ledger.")


def _on_estimate():
    ss.pop("estimate_error", None)
    ds_now = state.dataset()
    try:  # recorded in the ledger store before it is used; refused before any read past the dataset's cap
        est = core.schema_estimate.estimate_and_record(ds_now.df, ss["estimate_epsilon"], base=ds_now.schema,
                                                       use=spending.use("schema estimate"), store=spending.store())
    except (ValueError, core.MethodRefused, core.LedgerError) as err:
        ss["estimate_error"] = str(err)
        return
    ss["estimate_notes"] = (ds_now.fingerprint, list(est.notes))
    if est.steps:
        state.set_schema(est.schema)
        spending.show_spending()


pending = bool(core.schema_estimate.columns_to_estimate(schema))
left, right = st.columns([1, 2])
eps_estimate = left.number_input(
    "ε for the private estimate", min_value=core.constraints.EPSILON_MIN / 10,
    max_value=core.constraints.EPSILON_MAX, format="%.3g", key="estimate_epsilon",
    value=widgets.start_value("estimate_epsilon",
                              round(core.constraints.SCHEMA_ESTIMATE_SHARE * state.config().epsilon, 4)),
    help="Spent once on the data; every synthesis with the estimated schema takes it off its total ε.")
right.button(f"Estimate privately with ε = {eps_estimate:g}", key="estimate_schema", on_click=_on_estimate,
             disabled=not pending, type="primary" if undeclared else "secondary",
             help="Every value still read off the data (kinds, categories, bounds, special values, flags) gets a "
                  "value from a differentially private mechanism; declared values are kept and cost nothing.")
right.caption(f"Proposed: {core.constraints.SCHEMA_ESTIMATE_SHARE:.0%} of the release's ε "
              f"({state.config().epsilon:g}). A synthesis at ε = {state.config().epsilon:g} then has "
              f"{max(state.config().epsilon - eps_estimate, 0):g} left for itself.")
if "estimate_error" in ss:
    errors.show_error(ss["estimate_error"] + " The schema is unchanged.")
notes_of, notes = ss.get("estimate_notes", (None, []))
if notes and notes_of == ds.fingerprint:
    st.info("The estimate could not place every value at this ε; those stay read off the data:\n"
            + "\n".join(f"- {plain(n)}" for n in notes))

excluded = core.schema_editor.excluded_note(schema)
if excluded:
    st.info(plain(excluded))
table = core.schema_table(schema)
NOTE = core.schema_editor.DERIVED_NOTE
ESTIMATED = core.schema_editor.ESTIMATED_NOTE


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
    disabled=["column", NOTE, ESTIMATED, "missing", "reason"],
    column_config={
        "kind": st.column_config.SelectboxColumn("kind", options=list(core.KINDS), required=True),
        "categories": st.column_config.TextColumn("categories", help="Comma-separated list of every possible value"),
        "lower": st.column_config.NumberColumn("lower"),
        "upper": st.column_config.NumberColumn("upper"),
        "specials": st.column_config.TextColumn(
            "specials", help="Special values of a numeric column (such as 0 or −8), comma-separated: each is a "
                             "cell of its own and is released exactly"),
        "integer": st.column_config.CheckboxColumn("integer", width="small"),
        "nullable": st.column_config.CheckboxColumn("nullable", width="small"),
        "decimals": st.column_config.NumberColumn("decimals", min_value=0,
                                                  max_value=core.constraints.SCHEMA_DECIMALS_MAX, step=1, width="small",
                                                  help="Synthetic values are written rounded to this many decimals"),
        NOTE: st.column_config.TextColumn(NOTE, width="medium", help="Values of the row read off the data (not DP)"),
        ESTIMATED: st.column_config.TextColumn(ESTIMATED, width="medium",
                                               help="Values released by the private estimate, each with its ε"),
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


def _on_declare_one(key: str, choices: list):
    item = choices[ss[key]]
    state.set_schema(state.dataset().schema.declare_field(item.column, item.field))


choices = core.schema_editor.declarable(schema)
if choices:
    with st.expander("Declare one value read off the data as public"):
        key = f"declare_field_{ds.fingerprint[:12]}_{version}"
        pick = st.selectbox("Value read off the data", range(len(choices)), key=key,
                            format_func=lambda i: plain(choices[i].label))
        st.warning(plain(core.schema_editor.declaration_sentence(choices[pick])), icon="⚠️")
        st.button("Declare this value as public", key="declare_one", on_click=_on_declare_one, args=(key, choices))


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
