"""Framework adapters: the placeborag doubles behind the interfaces of LangChain, LlamaIndex
and Haystack.

Nothing here is imported by ``import placeborag``. Import the adapter you need; it imports its
framework and says which extra to install when the framework is missing:

* ``placeborag.integrations.langchain`` (``pip install 'placeborag[langchain]'``):
  ``PlaceboEmbeddings``, ``PlaceboVectorStore``, ``PlaceboRetriever``, ``PlaceboReranker``.
* ``placeborag.integrations.llama_index`` (``pip install 'placeborag[llamaindex]'``):
  ``PlaceboEmbedding``, ``PlaceboLlamaVectorStore``, ``PlaceboNodePostprocessor``,
  ``metadata_filters_to_where``, ``metadata_filter_function``.
* ``placeborag.integrations.haystack`` (``pip install 'placeborag[haystack]'``):
  ``PlaceboDocumentStore``, ``PlaceboEmbeddingRetriever``, ``PlaceboTextEmbedder``,
  ``PlaceboDocumentEmbedder``.
"""

# The adapters are the submodules above; the package itself exports no name.
__all__: list[str] = []
