#pragma once

#include <QString>

#include <optional>

namespace autocomp {

// PDFs as text for the agent builder, through Poppler's Qt 6 binding. A library of its own (autocomp_pdf),
// apart from autocomp_core: Poppler's binding brings Qt Gui, which the core library never links.
class PopplerPdfReader
{
public:
    // The text of every page, in reading order, pages separated by a blank line; nullopt with a message
    // naming the file when it cannot be opened (missing, not a PDF, encrypted).
    static std::optional<QString> read(const QString &path, QString *error);
    // Makes AgentBuilder read PDFs with read().
    static void install();
};

} // namespace autocomp
