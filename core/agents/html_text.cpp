#include "agents/html_text.h"

#include <QRegularExpression>
#include <QSet>

namespace autocomp {

namespace {

QString decodeEntities(const QString &text)
{
    static const QRegularExpression s_numeric(QStringLiteral("&#(x?)([0-9a-fA-F]+);"));
    QString out;
    qsizetype last = 0;
    auto it = s_numeric.globalMatch(text);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        out += QStringView(text).mid(last, m.capturedStart() - last);
        bool ok = false;
        const uint code = m.captured(2).toUInt(&ok, m.captured(1).isEmpty() ? 10 : 16);
        if (ok && code > 0 && code < 0x110000)
            out += QString::fromUcs4(reinterpret_cast<const char32_t *>(&code), 1);
        last = m.capturedEnd();
    }
    out += QStringView(text).mid(last);
    out.replace(QLatin1String("&lt;"), QLatin1String("<"));
    out.replace(QLatin1String("&gt;"), QLatin1String(">"));
    out.replace(QLatin1String("&quot;"), QLatin1String("\""));
    out.replace(QLatin1String("&#39;"), QLatin1String("'"));
    out.replace(QLatin1String("&apos;"), QLatin1String("'"));
    out.replace(QLatin1String("&nbsp;"), QLatin1String(" "));
    out.replace(QLatin1String("&amp;"), QLatin1String("&"));
    return out;
}

} // namespace

QString HtmlText::title(const QString &html)
{
    static const QRegularExpression s_title(QStringLiteral("<title[^>]*>(.*?)</title>"),
                                            QRegularExpression::CaseInsensitiveOption
                                                | QRegularExpression::DotMatchesEverythingOption);
    const QRegularExpressionMatch m = s_title.match(html);
    return m.hasMatch() ? decodeEntities(m.captured(1)).simplified() : QString();
}

QString HtmlText::toMarkdown(const QString &html)
{
    const auto option = QRegularExpression::CaseInsensitiveOption | QRegularExpression::DotMatchesEverythingOption;
    QString text = html;
    // Not text: scripts, styles, comments, the head.
    for (const char *pattern : {"<script\\b.*?</script>", "<style\\b.*?</style>", "<!--.*?-->", "<head\\b.*?</head>"})
        text.remove(QRegularExpression(QLatin1String(pattern), option));
    // Preformatted blocks keep their lines; they are fenced so the structure below leaves them alone.
    QStringList blocks;
    static const QRegularExpression s_pre(QStringLiteral("<pre\\b[^>]*>(.*?)</pre>"), option);
    QString withoutPre;
    qsizetype last = 0;
    for (auto it = s_pre.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        withoutPre += QStringView(text).mid(last, m.capturedStart() - last);
        QString code = m.captured(1);
        code.remove(QRegularExpression(QStringLiteral("<[^>]*>")));
        blocks << QStringLiteral("\n```\n") + decodeEntities(code).trimmed() + QStringLiteral("\n```\n");
        withoutPre += QStringLiteral("\x01%1\x01").arg(blocks.size() - 1);
        last = m.capturedEnd();
    }
    withoutPre += QStringView(text).mid(last);
    text = withoutPre;
    text.replace(QRegularExpression(QStringLiteral("\\s+")), QStringLiteral(" "));
    for (int level = 1; level <= 6; ++level)
        text.replace(QRegularExpression(QStringLiteral("<h%1\\b[^>]*>").arg(level), option),
                     QStringLiteral("\n\n") + QString(level, QLatin1Char('#')) + QLatin1Char(' '));
    text.replace(QRegularExpression(QStringLiteral("</h[1-6]>"), option), QStringLiteral("\n\n"));
    text.replace(QRegularExpression(QStringLiteral("<li\\b[^>]*>"), option), QStringLiteral("\n- "));
    text.replace(QRegularExpression(QStringLiteral("<(br|/p|p|/div|div|/tr|tr|/ul|/ol|table|/table)\\b[^>]*>"), option),
                 QStringLiteral("\n"));
    text.replace(QRegularExpression(QStringLiteral("</?(code|tt)\\b[^>]*>"), option), QStringLiteral("`"));
    text.replace(QRegularExpression(QStringLiteral("<t[dh]\\b[^>]*>"), option), QStringLiteral(" | "));
    text.remove(QRegularExpression(QStringLiteral("<[^>]*>")));
    text = decodeEntities(text);
    for (int i = 0; i < blocks.size(); ++i)
        text.replace(QStringLiteral("\x01%1\x01").arg(i), blocks.at(i));
    // Outside fences: trimmed lines, no runs of blank lines; inside: as written.
    QString out;
    bool fence = false;
    bool blank = true;
    for (const QString &line : text.split(QLatin1Char('\n'))) {
        const QString trimmed = line.trimmed();
        if (trimmed.startsWith(QLatin1String("```"))) {
            fence = !fence;
            out += trimmed + QLatin1Char('\n');
            blank = false;
            continue;
        }
        if (fence) {
            out += line + QLatin1Char('\n');
            continue;
        }
        if (trimmed.isEmpty() && blank)
            continue;
        blank = trimmed.isEmpty();
        out += trimmed + QLatin1Char('\n');
    }
    return out.trimmed() + QLatin1Char('\n');
}

QList<QUrl> HtmlText::links(const QString &html, const QUrl &base)
{
    static const QRegularExpression s_href(
        QStringLiteral("<a\\b[^>]*?href\\s*=\\s*(\"([^\"]*)\"|'([^']*)'|([^\\s>]+))"),
        QRegularExpression::CaseInsensitiveOption);
    QList<QUrl> out;
    QSet<QString> seen;
    for (auto it = s_href.globalMatch(html); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        QString href = m.captured(2);
        if (href.isEmpty())
            href = m.captured(3);
        if (href.isEmpty())
            href = m.captured(4);
        QUrl url = base.resolved(QUrl(decodeEntities(href)));
        url.setFragment(QString());
        if (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https"))
            continue;
        const QString key = url.toString();
        if (seen.contains(key))
            continue;
        seen.insert(key);
        out << url;
    }
    return out;
}

} // namespace autocomp
