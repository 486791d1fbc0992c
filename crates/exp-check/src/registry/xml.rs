use super::types::*;
use exp_syntax::units::Dimension::*;

pub const XML: BlockSchema = BlockSchema {
    kind: "xml",
    doc: "XML synthesis: extract a synthesis set from a corpus (or use one), generate similar documents, and compare them with the originals.",
    labelled: true,
    role: Role::Workload {
        shard_unit: "documents",
        shard_count: Some("documents"),
        metrics: &[
            "throughput",
            "document_size",
            "skeleton_jsd",
            "max_total_variation",
            "max_ks",
            "duplicate_rate",
        ],
        row_metrics: &[RowMetric::new(
            "document_size",
            Some(Bytes),
            ("xml_structure", "synthetic"),
            "Generated documents' sizes (the histogram rows of measure `document_size`).",
        )],
        natural_end: NaturalEnd::When(&["documents", "size"]),
    },
    props: &[
        Prop::optional("corpus", Ty::Path, "Corpus to extract from: file, directory or glob (.gz and .zip read too)."),
        Prop::optional("set", Ty::Path, "An existing synthesis set directory."),
        Prop::optional("documents", Ty::Int, "Documents to generate.").at_least(1.0),
        Prop::optional("size", Ty::Quantity(Bytes), "Output size to generate.").at_least(1.0),
        Prop::optional("split_at", Ty::Str, "The document element itself, the root's repeated child (`event` in `<log><event>…`, not `log`)."),
        Prop::with_default("attributes", Ty::Enum(&["keep", "names", "auto"]), "auto", "Attribute values in paths: keep all, names only, or auto (keep when few distinct)."),
        Prop::with_default("max_distinct", Ty::Int, "16", "`auto`: most distinct values an attribute may have to stay in paths.").range(1.0, 1_000_000.0),
        Prop::with_default("categorical_threshold", Ty::Int, "30", "Paths with at most this many distinct values are categorical, unless they are count data a discrete family fits better.").range(1.0, 1_000_000.0),
        Prop::with_default("obfuscate", Ty::Bool, "false", "Replace every string by a seeded random string of the same length."),
        Prop::with_default("per_file", Ty::Int, "1", "Documents per output file.").range(1.0, 1e9),
        Prop::with_default("gzip", Ty::Bool, "false", "Compress output files."),
        Prop::with_default("compare", Ty::Bool, "true", "Compare the generated documents with the corpus."),
        Prop::with_default("threads", Ty::Int, "0", "Generator threads; 0 means one per core.").range(0.0, 1024.0),
    ],
    variants: &[],
    parts: &[],
};
