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

The package itself imports no framework. It offers two functions that read a record's document
back as the application wrote it, from a store filled through any adapter:
``document_text(text, metadata)`` (a LlamaIndex node's own text, where the record holds what
LlamaIndex embedded) and ``document_metadata(metadata)`` (without the adapter's own keys).
"""

from placeborag._documents import document_metadata, document_text

__all__ = ["document_metadata", "document_text"]
