# Writes OUT, a C++ file holding the text of every page of DOCS (docs/*.md) for
# `tmakit explain` (src/explain/explain.cpp): the docs stay the one copy of the text.
# cmake -DDOCS=docs -DOUT=rule_docs.cpp -P embed_docs.cmake
file(GLOB pages RELATIVE ${DOCS} ${DOCS}/*.md)
list(SORT pages)
set(body "// Generated from docs/*.md by src/explain/embed_docs.cmake: do not edit.\n")
string(APPEND body "#include \"tmakit/explain/explain.hpp\"\n\nnamespace tmakit::explain {\n\n")
string(APPEND body "std::vector<Page> pages() {\n  return {\n")
foreach(p ${pages})
  file(READ ${DOCS}/${p} text)
  string(APPEND body "      {\"${p}\", R\"tmakitdoc(${text})tmakitdoc\"},\n")
endforeach()
string(APPEND body "  };\n}\n\n}  // namespace tmakit::explain\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
