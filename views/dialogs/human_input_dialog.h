#pragma once

#include "model/candidate.h"

#include <QDialog>
#include <QList>
#include <QString>

#include <functional>
#include <limits>

class QLabel;
class QPlainTextEdit;
class QTimer;
class QTreeWidget;

namespace autocomp {

class CodeView;

// What a human adds to a running search under one candidate: a plan (the LLM writes the code) or
// edited code (evaluated as it is).
//
// Edit Code: the parent's code in a CodeView (line numbers, find), highlighted in the target's language.
// Write a Plan (with setPlanContext): the parent's code and measured figures on the left; on the right the
// agent's menu with each strategy's record in the agent's runs, the plan's text, and the exact prompt the
// plan will be sent in, rebuilt as the text changes. Picking a menu item writes (or replaces) the plan's
// "Chosen optimization: N. <item>" line, which the engine parses (ResponseParser::parseMenuChoice) to
// record the item; the rest of the text is the user's.
class HumanInputDialog : public QDialog
{
    Q_OBJECT
public:
    enum Kind { Plan, Code };

    // One strategy of the agent's menu and its record over the agent's runs (MenuInsights).
    struct MenuEntry
    {
        QString text; // the item as the agent's menu states it
        int chosen = 0; // plans that chose it
        int improved = 0; // of its correct candidates, those faster than their parent
        double bestGain = std::numeric_limits<double>::quiet_NaN(); // parent score / own score, the best
    };
    struct PlanContext
    {
        Candidate parent;
        QString figures; // the parent's measured figures in one line (status, score with interval, speedups)
        QString metrics; // its metrics in words
        QList<MenuEntry> menu; // in the agent's order, numbered from 1
        int runs = 0; // how many of the agent's runs the records cover
        QString recordsError; // why there are no records (the store could not be read), else empty
        // The exact prompt `plan` will be sent in; empty with *error set when it cannot be built.
        std::function<QString(const QString &plan, QString *error)> prompt;
    };

    // `text` prefills the editor (the candidate's code for Code); `language` picks its highlighting.
    HumanInputDialog(Kind kind, qint64 parentId, const QString &text, const QString &language,
                     QWidget *parent = nullptr);

    Kind kind() const { return m_kind; }
    qint64 parentId() const { return m_parentId; }
    QString text() const;
    QPlainTextEdit *editor() const { return m_edit; }

    // Plan only: shows the parent, the menu picker and the prompt preview (objectNames humanPlanParentCode,
    // humanPlanFigures, humanPlanMenu, humanPlanPrompt).
    void setPlanContext(const PlanContext &context);
    // Writes "Chosen optimization: N. <item>" for menu item `number` (1-based) into the plan; false when
    // there is no such item.
    bool pickMenuItem(int number);
    // The prompt as previewed now (after the pending update, if any).
    QString promptPreview();

private:
    void updatePrompt();

    Kind m_kind;
    qint64 m_parentId;
    QString m_language;
    QPlainTextEdit *m_edit;
    PlanContext m_context;
    QTreeWidget *m_menu = nullptr;
    CodeView *m_parentCode = nullptr;
    QLabel *m_figures = nullptr;
    CodeView *m_prompt = nullptr;
    QLabel *m_promptError = nullptr;
    QTimer *m_promptTimer = nullptr;
};

} // namespace autocomp
