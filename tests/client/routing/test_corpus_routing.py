"""Acceptance 2: offline manifests alone route hand-written queries over real corpus skills.

The skills are the 126 of K-Dense-AI/claude-scientific-skills in ../shared/corpus (no synthetic
queries: what a skill installed from a folder gets), routed lexical-only and with MiniLM. Each
query below was written by reading the skill it expects, in a user's words rather than the
description's.
"""

from __future__ import annotations

import pytest

from skillctl.routing import semantic as sem
from skillctl.skillset import SkillSet

REPO = "K-Dense-AI__claude-scientific-skills"
CLEAR_MAJORITY = 0.6

QUERIES = {
    "parse a GenBank file and translate the sequences with biopython": "biopython",
    "find differentially expressed genes from my bulk RNA-seq count matrix": "pydeseq2",
    "batch correction of single-cell omics with a deep generative model (scVI)": "scvi-tools",
    "forecast my univariate time series zero-shot with TimesFM": "timesfm-forecasting",
    "open this .h5ad annotated matrix file": "anndata",
    "compare mass spectra to identify compounds in metabolomics": "matchms",
    "peptide identification in a proteomics mass spectrometry workflow with OpenMS": "pyopenms",
    "read the DICOM medical images and anonymise the headers": "pydicom",
    "generate an image of a lab with FLUX": "generate-image",
    "draft testable hypotheses from the observations in my lab notebook": "hypothesis-generation",
    "make powerpoint slides for my research talk": "scientific-slides",
    "spike sorting of a neuropixels recording from SpikeGLX": "neuropixels-analysis",
    "scan this protein for N-glycosylation sequons": "glycoengineering",
    "compute shortest paths and centrality in a graph with networkx": "networkx",
    "design a circuit for Google quantum hardware with cirq": "cirq",
    "manage biology data lineage with LaminDB": "lamindb",
    "read flow cytometry FCS files": "flowio",
    "write a formal peer review of this manuscript": "peer-review",
    "fine-tune a pretrained transformer model from hugging face for text classification": "transformers",
    "build a hierarchical bayesian model with MCMC in PyMC": "pymc",
    "pull DNA sequences and inventory from our Benchling registry": "benchling-integration",
    "manipulate a newick phylogenetic tree with ETE": "etetoolkit",
    "query the precision medicine knowledge graph PrimeKG for drug-disease links": "primekg",
    "run a qiskit circuit on IBM quantum hardware": "qiskit",
    "read alignments from a BAM file and variants from a VCF with pysam": "pysam",
    "ingest VCF files into TileDB for scalable variant queries": "tiledbvcf",
    "compute alpha and beta diversity metrics with scikit-bio": "scikit-bio",
    "time series classification with aeon": "aeon",
    "machine learning on genomic interval BED files": "geniml",
    "predict patient outcomes from EHR data with a healthcare AI toolkit": "pyhealth",
    "draw a mermaid flowchart in my markdown document": "markdown-mermaid-writing",
    "predict protein-ligand binding poses with diffusion docking": "diffdock",
    "get expression data across millions of cells from the CELLxGENE census": "cellxgene-census",
    "scale my pandas workflow beyond RAM with dask": "dask",
    "apply Lipinski and PAINS drug-likeness filters to my compound library": "medchem",
    "self-hosted NotebookLM alternative for my research documents": "open-notebook",
    "which statistical test should I use to compare these two groups": "statistical-analysis",
    "detect the available CPU, GPU and memory before a heavy computation": "get-available-resources",
    "work with FITS files and celestial coordinates in astropy": "astropy",
    "convert BAM to bigWig and plot heatmaps around TSS with deeptools": "deeptools",
    "graph neural network for molecules with torchdrug": "torchdrug",
    "back up my LabArchives electronic lab notebook entries": "labarchive-integration",
    "format my references and find citations on PubMed and Google Scholar": "citation-management",
    "upload data and build an applet on DNAnexus": "dnanexus-integration",
    "retrieve microscopy images from an OMERO server": "omero-integration",
    "train a PPO agent with stable-baselines3": "stable-baselines3",
    "run this numerical code in MATLAB or Octave": "matlab",
    "build a graph neural network with PyTorch Geometric": "torch-geometric",
    "solve this integral symbolically with sympy": "sympy",
    "discrete-event simulation of a queue with simpy": "simpy",
    "fit an OLS regression and a GLM with statsmodels": "statsmodels",
    "download cancer imaging data from the NCI Imaging Data Commons": "imaging-data-commons",
    "simulate an open quantum system master equation with qutip": "qutip",
    "brainstorm research ideas for my next project": "scientific-brainstorming",
    "compute molecular descriptors from SMILES with rdkit": "rdkit",
    "evaluate the validity of the experimental design in this study": "scientific-critical-thinking",
    "train a random forest classifier with scikit-learn": "scikit-learn",
    "cluster my single-cell RNA-seq data and find marker genes with scanpy": "scanpy",
    "plot a violin plot of the distributions with seaborn": "seaborn",
    "analyse a crystal structure from a CIF file and its band structure with pymatgen": "pymatgen",
    "look up gene dependency scores for a cancer cell line in DepMap": "depmap",
    "generate protein sequences with the ESM3 protein language model": "esm",
    "store chunked compressed N-D arrays on S3 with zarr": "zarr-python",
    "query UniProt and KEGG through bioservices": "bioservices",
    "run a computational fluid dynamics simulation with fluidsim": "fluidsim",
    "infer a gene regulatory network with GRNBoost2": "arboreto",
    "prepare ISO 13485 documentation for our medical device quality management system": "iso-13485-certification",
    "extract tiles from a whole slide image and detect tissue with histolab": "histolab",
    "UMAP dimensionality reduction of my embeddings": "umap-learn",
    "write a medical treatment plan for a diabetic patient": "treatment-plans",
    "organise my PyTorch training loop into a LightningModule": "pytorch-lightning",
    "run my python function on a serverless GPU with modal": "modal",
    "speed up my numpy code on the GPU with CuPy and Numba CUDA": "optimize-for-gpu",
    "RNA velocity analysis of spliced and unspliced counts": "scvelo",
    "process ECG and EDA physiological signals with neurokit2": "neurokit2",
    "standardise molecules with datamol": "datamol",
    "write a market research report on the EV battery industry": "market-research-reports",
    "explain my model's predictions with SHAP values": "shap",
    "time-to-event survival analysis with a Cox model in scikit-survival": "scikit-survival",
    "query the national debt from the US Treasury fiscal data API": "usfiscaldata",
    "add these papers to my Zotero library": "pyzotero",
    "flux balance analysis of a metabolic model with COBRApy": "cobrapy",
    "write an NIH grant proposal": "research-grants",
    "publish our lab protocol on protocols.io": "protocolsio-integration",
    "LaTeX template for a NeurIPS submission": "venue-templates",
    "conduct a systematic literature review on CRISPR delivery": "literature-review",
    "create an infographic about vaccine efficacy": "infographics",
    "polars dataframe faster than pandas": "polars",
    "read a shapefile and join it to GeoJSON with geopandas": "geopandas",
    "multi-objective optimisation with NSGA-II and a Pareto front": "pymoo",
    "train a variational quantum circuit with pennylane": "pennylane",
    "make a research poster in LaTeX with beamerposter": "latex-posters",
    "run a molecular dynamics simulation of my protein with OpenMM": "molecular-dynamics",
    "ADME toxicity benchmark datasets from Therapeutics Data Commons": "pytdc",
    "property prediction with deepchem featurizers": "deepchem",
    "write a protocol for the Opentrons OT-2 robot": "opentrons-integration",
    "build a maximum likelihood phylogenetic tree with IQ-TREE": "phylogenetics",
    "write a case report following CARE guidelines": "clinical-reports",
    "fine-grained control over every element of my matplotlib figure": "matplotlib",
    "process a billion-row table out of core with vaex": "vaex",
    "publication-ready figures for a journal submission": "scientific-visualization",
    "reinforcement learning at high speed with pufferlib": "pufferlib",
    "submit protocols to the Ginkgo cloud lab": "ginkgo-cloud-lab",
    "remote sensing and GIS spatial analysis of satellite imagery": "geomaster",
}

SMALL_TALK = [
    "hi there!",
    "thanks, that's all for now",
    "how is your week going?",
    "what should I call you?",
    "ok neat, got it",
    "tell me a joke",
    "see you tomorrow",
    "nice, thank you so much",
]


@pytest.fixture(scope="module", params=["lexical", "semantic"])
def scientific_skills(request, corpus_dir, tmp_path_factory, monkeypatch_module):
    """The same skills routed lexical-only and, when the extra is installed, with MiniLM (the
    default for users who have it): offline manifests, so no synthetic queries and no whitening."""
    semantic = request.param == "semantic"
    if semantic and not sem.available():
        pytest.skip("the semantic extra is not installed")
    monkeypatch_module.setenv("SKILLYARD_HOME", str(tmp_path_factory.mktemp("home")))
    skills = SkillSet.from_dir(corpus_dir / REPO, semantic=semantic)
    assert skills.semantic is semantic
    assert len(skills.names) >= 100
    return skills


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_hand_written_queries_are_at_least_100_and_name_real_skills(scientific_skills):
    assert len(QUERIES) >= 100
    assert set(QUERIES.values()) <= set(scientific_skills.names)


def test_expected_skill_comes_first_for_a_clear_majority(scientific_skills):
    firsts = [
        (query, expected, [m.name for m in scientific_skills.route(query, recent=False)][:1])
        for query, expected in QUERIES.items()
    ]
    hits = sum(got == [expected] for _, expected, got in firsts)
    misses = [(q, e, g) for q, e, g in firsts if g != [e]]
    assert hits / len(QUERIES) >= CLEAR_MAJORITY, misses


def test_small_talk_routes_to_nothing(scientific_skills):
    routed = {q: [m.name for m in scientific_skills.route(q, recent=False)] for q in SMALL_TALK}
    assert routed == {q: [] for q in SMALL_TALK}
