// libxml2's HTML parser and XPath, for tests that query pages.
// Debian builds libxml2 with ICU, whose headers clash with Foundation's own copy of ICU in the
// same Swift module; none of the ICU-dependent declarations are used, so they are left out.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/HTMLparser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <libxml/parser.h>
