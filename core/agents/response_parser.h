#pragma once

#include <QString>
#include <QStringList>

#include <optional>

namespace autocomp {

class ResponseParser
{
public:
    // The last complete fenced code block, preferring blocks tagged with `language` (or an alias);
    // nullopt when the response has no complete block.
    static std::optional<QString> extractCode(const QString &response, const QString &language);

    struct MenuChoice
    {
        int number = 0; // 1-based index into the full menu; 0 when new or not found
        QString text; // menu text, or the new idea's name
        bool isNew = false;
    };
    // Reads "Chosen optimization: N. text"; falls back to the menu item whose text the plan quotes.
    static MenuChoice parseMenuChoice(const QString &plan, const QStringList &menu);
};

} // namespace autocomp
