#include "agents/response_parser.h"

#include <QRegularExpression>

namespace autocomp {

namespace {

QStringList aliases(const QString &language)
{
    const QString l = language.toLower();
    if (l == QLatin1String("cpp") || l == QLatin1String("c++") || l == QLatin1String("c"))
        return {QStringLiteral("cpp"), QStringLiteral("c++"), QStringLiteral("c"), QStringLiteral("cxx"),
                QStringLiteral("cc")};
    if (l == QLatin1String("cuda"))
        return {QStringLiteral("cuda"), QStringLiteral("cu"), QStringLiteral("cpp"), QStringLiteral("c++")};
    if (l == QLatin1String("python"))
        return {QStringLiteral("python"), QStringLiteral("py")};
    return {l};
}

} // namespace

std::optional<QString> ResponseParser::extractCode(const QString &response, const QString &language)
{
    struct Block
    {
        QString tag;
        QString code;
    };
    QList<Block> blocks;
    const QStringList lines = response.split(QLatin1Char('\n'));
    bool inside = false;
    Block current;
    QString fence;
    for (const QString &raw : lines) {
        const QString line = raw.trimmed();
        if (!inside) {
            if (line.startsWith(QLatin1String("```")) || line.startsWith(QLatin1String("~~~"))) {
                inside = true;
                fence = line.left(3);
                current = {line.mid(3).trimmed().toLower(), {}};
            }
        } else if (line == fence) {
            inside = false;
            blocks << current;
        } else {
            current.code += raw + QLatin1Char('\n');
        }
    }
    if (blocks.isEmpty())
        return std::nullopt;
    const QStringList wanted = aliases(language);
    for (qsizetype i = blocks.size() - 1; i >= 0; --i)
        if (wanted.contains(blocks.at(i).tag))
            return blocks.at(i).code;
    for (qsizetype i = blocks.size() - 1; i >= 0; --i)
        if (blocks.at(i).tag.isEmpty())
            return blocks.at(i).code;
    return blocks.last().code;
}

ResponseParser::MenuChoice ResponseParser::parseMenuChoice(const QString &plan, const QStringList &menu)
{
    MenuChoice choice;
    static const QRegularExpression s_line(
        QStringLiteral("chosen optimi[sz]ation\\s*[:\\-]\\s*\\**\\s*(new|\\d+)?\\s*[.):\\-]?\\s*(.*)"),
        QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch m = s_line.match(plan);
    if (m.hasMatch()) {
        const QString number = m.captured(1);
        QString text = m.captured(2).trimmed();
        text.remove(QLatin1Char('*'));
        text = text.trimmed();
        if (number.compare(QLatin1String("new"), Qt::CaseInsensitive) == 0) {
            choice.isNew = true;
            choice.text = text;
            return choice;
        }
        if (!number.isEmpty()) {
            const int n = number.toInt();
            if (n >= 1 && n <= menu.size()) {
                choice.number = n;
                choice.text = menu.at(n - 1);
                return choice;
            }
        }
        for (int i = 0; i < menu.size(); ++i) {
            if (!text.isEmpty() && menu.at(i).startsWith(text.left(40), Qt::CaseInsensitive)) {
                choice.number = i + 1;
                choice.text = menu.at(i);
                return choice;
            }
        }
        if (!text.isEmpty()) {
            choice.isNew = true;
            choice.text = text;
            return choice;
        }
    }
    for (int i = 0; i < menu.size(); ++i) {
        if (plan.contains(menu.at(i), Qt::CaseInsensitive)) {
            choice.number = i + 1;
            choice.text = menu.at(i);
            return choice;
        }
    }
    return choice;
}

} // namespace autocomp
