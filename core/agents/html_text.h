#pragma once

#include <QList>
#include <QString>
#include <QUrl>

namespace autocomp {

// Reads an HTML page as the agent builder needs it: its text with the structure a model reads well
// (headings as "#", list items as "-", preformatted blocks fenced), and the links it holds.
class HtmlText
{
public:
    static QString toMarkdown(const QString &html);
    static QString title(const QString &html);
    // Absolute http(s) links of the page (resolved against `base`), without fragments, in page order, unique.
    static QList<QUrl> links(const QString &html, const QUrl &base);
};

} // namespace autocomp
