#pragma once

#include "model/agent.h"
#include "model/problem.h"
#include "model/target.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace autocomp {

// search.menu_strategy: one-shot (Autocomp's name). Before the plans for a parent, one call shows a model
// the parent's code, the architecture, the ISA and the current menu, and asks for about ten strategies
// that are not on it, between <strategies> tags, one a line; they join that parent's menu before dropout.
// Pure functions; the engine sends the question (LLM call phase "menu").
class MenuStrategy
{
public:
    static QString oneShotPhase() { return QStringLiteral("menu"); }
    // The question. `isaDocs`: the ISA the plan prompts show (after the ISA filter); the menu is listed
    // under "## Current menu" as "- item" lines (menuOf() reads it back). Ends "New strategies:".
    static QString oneShotPrompt(const Agent &agent, const Problem &problem, const Target &target, const QString &code,
                                 const QStringList &menu, const QString &isaDocs);
    // The menu a oneShotPrompt() listed; empty for any other text.
    static QStringList menuOf(const QString &prompt);
    // The strategies of an answer: the lines between its last <strategies> and </strategies> (or to the
    // end when the closing tag is missing), bullets and numbering removed, without blanks, repeats and
    // items already on `menu` (compared without case and surrounding space); at most 20.
    static QStringList parse(const QString &answer, const QStringList &menu);
    // The strategies a stored one-shot call proposed: parse(answer, menuOf(prompt)).
    static QStringList proposedBy(const QString &prompt, const QString &answer)
    {
        return parse(answer, menuOf(prompt));
    }
};

} // namespace autocomp
