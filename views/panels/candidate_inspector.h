#pragma once

#include "model/candidate.h"
#include "model/eval_result.h"
#include "model/llm_call.h"

#include <QList>
#include <QTabWidget>

#include <optional>

class QLabel;
class QPlainTextEdit;
class QTableWidget;
class QTextBrowser;
class QUrl;

namespace autocomp {

class ShownRun;

// Everything about one candidate, one tab per aspect: plan, code, evaluation, prompts, LLM usage. The Evaluation
// tab's logs keep their line breaks and link each place in the candidate's source (`candidate.EXT:LINE`) to the
// Code tab (showCodeLine), and link the folder of the evaluation's files while it exists.
class CandidateInspector : public QTabWidget
{
    Q_OBJECT
public:
    enum Tabs { PlanTab, CodeTab, EvaluationTab, PromptsTab, LlmTab };

    explicit CandidateInspector(QWidget *parent = nullptr);

    // `metric` gives the score its unit; `language` picks the code highlighting (see CodeHighlighter); `root` and
    // `parent` (when known) give the score its context: the speedups over them.
    void setCandidate(const Candidate &candidate, const QList<LlmCall> &calls, const QList<StepResult> &steps,
                      const QString &metric, const QString &language, const std::optional<Candidate> &root = {},
                      const std::optional<Candidate> &parent = {});
    // The Evaluation tab's heading as plain text: "correct · 7.40 ms · 36.7× root (±0.8) · 3.3× parent · 42 % of
    // the roofline bound".
    // `unit`: the run's stored unit (RunInfo::metricUnit); empty: the one the metric's name implies.
    static QString headline(const Candidate &candidate, const QString &metric, const std::optional<Candidate> &root,
                            const std::optional<Candidate> &parent, const QString &unit = {});
    QString evaluationHeadline() const { return m_headline; }
    // The folder of a candidate's evaluation files on this machine (the evaluator's job directory, holding work/
    // and judge/), found from the paths its steps ran with. Empty when there is none, with *why saying so in
    // words: not evaluated here, removed when the evaluation ended (evaluation.keep_workdirs is off), or run on
    // another machine.
    static QString evaluationFolder(const QList<StepResult> &steps, QString *why);
    // Shows the Code tab at 1-based `line` of the candidate's code, the cursor on it and the line highlighted
    // (the Evaluation tab's `candidate.EXT:LINE` links call it); false when the code has no such line.
    bool showCodeLine(int line);
    // The 1-based line showCodeLine() highlighted last; 0 when none is (a new candidate clears it).
    int highlightedLine() const { return m_highlightedLine; }
    void clear();
    qint64 candidateId() const { return m_candidateId; }
    // Follows `run`'s selected candidate (again whenever it changes), with its LLM calls and evaluation steps
    // as stored; a new run clears it.
    void setShownRun(const ShownRun *run);

private:
    void showPlan(const Candidate &candidate);
    void showEvaluation(const Candidate &candidate, const QList<StepResult> &steps, const QString &metric,
                        const std::optional<Candidate> &root, const std::optional<Candidate> &parent);
    void showPrompts(const QList<LlmCall> &calls);
    void showLlmUsage(const QList<LlmCall> &calls);

    void linkClicked(const QUrl &url);

    qint64 m_candidateId = 0;
    int m_highlightedLine = 0;
    QString m_headline;
    QString m_metricUnit; // the shown run's stored unit (setShownRun), for its metric's figures
    QString m_language;
    QLabel *m_menuItemLabel;
    QTextBrowser *m_planView;
    QPlainTextEdit *m_codeView;
    QTextBrowser *m_evaluationView;
    QTextBrowser *m_promptsView;
    QTableWidget *m_llmView;
};

} // namespace autocomp
