#pragma once

#include <QList>
#include <QString>

#include <optional>

namespace autocomp {

// Search/replace edit mode: the model answers with blocks
//   <<<<<<< SEARCH
//   exact lines of the current code
//   =======
//   replacement lines
//   >>>>>>> REPLACE
// Each block applies exactly; failing that, with whitespace-normalized line matching. A block that
// matches nowhere (or more than once) fails the whole edit with a reason: never a silent fallback.
class EditApplier
{
public:
    struct Edit
    {
        QString search;
        QString replace;
    };
    struct Result
    {
        bool ok = false;
        QString code;
        QString error;
        int fuzzyBlocks = 0; // blocks that needed whitespace-normalized matching
    };

    static QList<Edit> parse(const QString &response);
    static Result apply(const QString &code, const QList<Edit> &edits);
    static QString formatInstructions();
};

} // namespace autocomp
